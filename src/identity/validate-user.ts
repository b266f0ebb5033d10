/**
 * The one validator and normalizer every source calls on what it mapped, after its own
 * checks of shape (a missing attribute, a bad `active` value) and before duplicates are
 * looked for. It refuses what the text rules refuse (text-rules.ts) and returns the entry
 * with every name and address in NFC, addresses without repeats under `nameKey`.
 * The first failing rule is the reason; fields are checked in a fixed order
 * (externalId, userName, e-mails, displayName, givenName, familyName).
 */
import { nameKey, nfc } from './canonical-name.ts';
import type { NormalizedGroup, NormalizedUser } from './model.ts';
import { emailProblem, idProblem, nameProblem, userNameProblem } from './text-rules.ts';

export type Checked<T> = { ok: true; value: T } | { ok: false; reason: string };

const NAME_FIELDS = ['displayName', 'givenName', 'familyName'] as const;

/** Addresses in NFC, the first spelling of each `nameKey` kept, in order; undefined when unchanged. */
function canonicalEmails(emails: string[]): string[] | undefined {
  let changed = false;
  const keys = new Set<string>();
  const out: string[] = [];
  for (const e of emails) {
    const v = nfc(e);
    const k = nameKey(v);
    if (keys.has(k)) {
      changed = true;
      continue;
    }
    keys.add(k);
    if (v !== e) changed = true;
    out.push(v);
  }
  return changed ? out : undefined;
}

/** The user in canonical form, or the reason it is refused. Returns the same object when nothing changes. */
export function validateUser(user: NormalizedUser): Checked<NormalizedUser> {
  const reason =
    idProblem('externalId', user.externalId) ??
    userNameProblem('userName', user.userName) ??
    user.emails.reduce<string | undefined>((r, e) => r ?? emailProblem('emails', e), undefined) ??
    NAME_FIELDS.reduce<string | undefined>((r, f) => {
      const v = user[f];
      return r ?? (v === undefined ? undefined : nameProblem(f, v));
    }, undefined);
  if (reason !== undefined) return { ok: false, reason };

  let out = user;
  const edit = (): NormalizedUser => (out === user ? (out = { ...user }) : out);
  const userName = nfc(user.userName);
  if (userName !== user.userName) edit().userName = userName;
  for (const f of NAME_FIELDS) {
    const v = user[f];
    if (v !== undefined && nfc(v) !== v) edit()[f] = nfc(v);
  }
  const emails = canonicalEmails(user.emails);
  if (emails) edit().emails = emails.map((e) => (e === userName ? userName : e));
  if (user.emailTypes) {
    const types = Object.entries(user.emailTypes);
    if (types.some(([e]) => nfc(e) !== e)) edit().emailTypes = Object.fromEntries(types.map(([e, t]) => [nfc(e), t]));
  }
  return { ok: true, value: out };
}

/** A group's id and displayName: the same rules as a user's id and display name; the name in NFC. */
export function validateGroup<G extends Pick<NormalizedGroup, 'externalId' | 'displayName'>>(group: G): Checked<G> {
  const reason = idProblem('externalId', group.externalId) ?? nameProblem('displayName', group.displayName);
  if (reason !== undefined) return { ok: false, reason };
  const displayName = nfc(group.displayName);
  return { ok: true, value: displayName === group.displayName ? group : { ...group, displayName } };
}
