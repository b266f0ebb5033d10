import { z } from 'zod';
import { contentFile, secretFile } from '../../config/file-refs.ts';
import { PRESET_NAMES } from './presets.ts';

/** One base DN or several; always an array after parsing. */
const baseDnSchema = z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]).transform((v) => (Array.isArray(v) ? v : [v]));

const idFormat = z.enum(['string', 'guid']);

/** Overrides of the preset's user attribute names; `extra` copies LDAP attributes into `attributes.<key>`. */
const userAttributesSchema = z.strictObject({
  externalId: z.string().min(1).optional(),
  /** `guid` decodes a 16-byte binary GUID (AD objectGUID); `string` takes the value as is. */
  externalIdFormat: idFormat.optional(),
  userName: z.string().min(1).optional(),
  givenName: z.string().min(1).optional(),
  familyName: z.string().min(1).optional(),
  displayName: z.string().min(1).optional(),
  emails: z.union([z.string().min(1), z.array(z.string().min(1))]).optional(),
  /** `attributes.<key>` ← LDAP attribute, e.g. `{ department: departmentNumber, title: title }`. */
  extra: z.record(z.string().min(1), z.string().min(1)).default({}),
});

const groupAttributesSchema = z.strictObject({
  externalId: z.string().min(1).optional(),
  externalIdFormat: idFormat.optional(),
  displayName: z.string().min(1).optional(),
});

const searchScope = z.enum(['sub', 'one']).default('sub');

/** How the source sees changes between full reads (docs/sources.md, "Change detection"). */
export const ldapChangesSchema = z.strictObject({
  /**
   * `auto`: `usn` with the active-directory preset, `modify-timestamp` otherwise; `off`: no
   * change reader (every run is a full read).
   */
  mechanism: z.enum(['auto', 'modify-timestamp', 'usn', 'off']).default('auto'),
  /** How often the daemon asks for changes. */
  pollSeconds: z.number().positive().default(2),
  /** `modify-timestamp`: how far before the last change seen each poll looks again (timestamps have 1 s resolution). */
  overlapSeconds: z.number().min(0).max(3600).default(5),
  /** `usn`: read deleted objects with the Show Deleted control (Active Directory, Samba AD). */
  deletedObjects: z.boolean().default(true),
  /**
   * A changed group's members are looked up entry by entry up to this many lookups (its nested
   * groups, its parents, each member); beyond, members are answered from the admissions the
   * change reader keeps (user-dn-index.ts) after one search for the user DNs present now.
   */
  maxMemberLookups: z.number().int().min(0).default(2000),
  /** Where changed entries are looked for (so a move out of scope is seen); default: the naming contexts holding the base DNs. */
  baseDn: baseDnSchema.optional(),
});

export const ldapDisabledSchema = z
  .strictObject({
    userAccountControl: z.boolean().optional(),
    attribute: z.string().min(1).optional(),
    values: z.array(z.string()).optional(),
    filter: z.string().min(1).optional(),
  })
  .refine((d) => d.values === undefined || d.attribute !== undefined, { message: '`values` needs `attribute`', path: ['values'] });

export const ldapSourceSchema = z
  .strictObject({
    type: z.literal('ldap'),
    /** Vendor defaults for filters, attribute names, ids, membership and disabled accounts. */
    preset: z.enum(PRESET_NAMES).default('openldap'),
    /** `ldaps://host[:636]` or `ldap://host[:389]` (with `startTls: true`). */
    url: z.string().regex(/^ldaps?:\/\/[^/?#\s]+\/?$/i, 'use ldap://host[:port] or ldaps://host[:port] (no path)'),
    startTls: z.boolean().default(false),
    /** Plain ldap:// without StartTLS sends the bind password in clear; refused unless set. */
    allowInsecure: z.boolean().default(false),
    /** PEM CA bundle for the directory's certificate. Relative to the config file. */
    caFile: contentFile().optional(),
    bindDn: z.string().min(1),
    bindPassword: z.string().min(1).optional(),
    /** File holding the bind password (a mounted secret); trailing newline ignored. */
    bindPasswordFile: secretFile().optional(),
    connectTimeoutSeconds: z.number().positive().default(10),
    /** Per LDAP operation (bind, one page of a search); also sent as the server-side time limit. */
    timeoutSeconds: z.number().positive().default(120),
    /** Entries per page (RFC 2696 paged results). */
    pageSize: z.number().int().min(1).max(10_000).default(500),
    /** An empty user search is treated as an error (a wrong base DN must not deprovision everyone). */
    allowEmpty: z.boolean().default(false),
    users: z.strictObject({
      baseDn: baseDnSchema,
      /** Defaults to the preset's user filter. */
      filter: z.string().min(1).optional(),
      scope: searchScope,
      attributes: userAttributesSchema.prefault({}),
    }),
    /** Omit to read users only. */
    groups: z
      .strictObject({
        baseDn: baseDnSchema,
        filter: z.string().min(1).optional(),
        scope: searchScope,
        attributes: groupAttributesSchema.prefault({}),
      })
      .optional(),
    membership: z
      .strictObject({
        attribute: z.enum(['member', 'uniqueMember', 'memberUid']).optional(),
        /** For `memberUid`: the user attribute its values name (default `uid`). */
        uidAttribute: z.string().min(1).optional(),
        /** Members of nested groups become members of the parent (cycles are cut). */
        flattenNested: z.boolean().optional(),
        /** Follow Active Directory `member;range=…` slices. */
        rangeRetrieval: z.boolean().optional(),
      })
      .prefault({}),
    /** Replaces the preset's disabled-account rule when set. */
    disabled: ldapDisabledSchema.optional(),
    changes: ldapChangesSchema.prefault({}),
  })
  .refine((c) => (c.bindPassword === undefined) !== (c.bindPasswordFile === undefined), {
    message: 'set exactly one of bindPassword (e.g. "${LDAP_BIND_PASSWORD}") or bindPasswordFile (a mounted secret file)',
    path: ['bindPassword'],
  })
  .refine((c) => !(c.startTls && /^ldaps:/i.test(c.url)), {
    message: 'startTls is for ldap:// URLs; ldaps:// is already TLS',
    path: ['startTls'],
  })
  .refine((c) => /^ldaps:/i.test(c.url) || c.startTls || c.allowInsecure, {
    message:
      'ldap:// without TLS would send the bind password in clear: use ldaps://, set startTls: true, or (for a local test directory only) allowInsecure: true',
    path: ['url'],
  });

export type LdapSourceConfig = z.infer<typeof ldapSourceSchema>;
export type LdapSourceInput = z.input<typeof ldapSourceSchema>;
