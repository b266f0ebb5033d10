/**
 * One user or group entry of a file source. Entries are validated one by one, so a bad
 * entry is rejected with its reason while the others are still read. Unknown fields are
 * refused (a typo such as `emial` would otherwise lose data); extra data goes under
 * `attributes`.
 */
import { z } from 'zod';

/** Ids may be written as numbers in YAML (`externalId: 1001`); they are strings everywhere else. */
const id = z.preprocess((v) => (typeof v === 'number' ? String(v) : v), z.string().trim().min(1));
const text = z.string().trim().min(1);
/** Its syntax is checked by the validator every source shares (identity/validate-user.ts), for one reason text. */
const email = text;

/** An address with its SCIM `type` (work, home…), as `provisioning.emails` may send it. */
const typedEmail = z.strictObject({ value: email, type: text.optional(), primary: z.boolean().optional() });

export const userEntrySchema = z.strictObject({
  externalId: id,
  userName: text,
  givenName: text.optional(),
  familyName: text.optional(),
  displayName: text.optional(),
  /** SCIM-style alternative to givenName/familyName. */
  name: z.strictObject({ givenName: text.optional(), familyName: text.optional() }).optional(),
  /** One address or a list, each an address or `{ value, type?, primary? }`; the first (or the one marked primary) is primary. */
  // The list first: messages about a bad entry in the list then name its allowed keys.
  emails: z.union([z.array(z.union([email, typedEmail])), email.transform((e) => [e])]).default([]),
  active: z.boolean().default(true),
  attributes: z.record(z.string(), z.unknown()).default({}),
});
export type UserEntry = z.infer<typeof userEntrySchema>;

export const groupEntrySchema = z.strictObject({
  externalId: id,
  displayName: text,
  /** Member users by externalId. */
  members: z.array(id).default([]),
});
export type GroupEntry = z.infer<typeof groupEntrySchema>;
