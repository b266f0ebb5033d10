/**
 * `provisioning.source.type: google-workspace`: the Admin SDK Directory API, read with a
 * service account key (a mounted file, never inline) through domain-wide delegation as an
 * administrator (`subject`). Only read-only scopes are ever requested.
 */
import { z } from 'zod';
import { secretFile } from '../../config/file-refs.ts';
import { assertSecureUrl } from '../../platform/secure-url.ts';

const groupsSchema = z
  .strictObject({
    /** Directory API group search, e.g. `email:eng-*`; default all groups of the customer. */
    query: z.string().min(1).optional(),
    /** Exactly these groups (e-mail addresses); each must exist or the read fails. */
    emails: z.array(z.string().email()).min(1).optional(),
    /** Members of nested groups become members of the parent (cycles are cut). */
    flattenNested: z.boolean().default(true),
  })
  .refine((g) => g.query === undefined || g.emails === undefined, {
    message: 'set groups.query or groups.emails, not both',
    path: ['emails'],
  });

const changesSchema = z.strictObject({
  /**
   * Google lists admin events in the Reports API some time after they happen (its documented
   * data lag): each poll re-reads this far behind the newest event seen; events already
   * handled are skipped by their id.
   */
  overlapSeconds: z.number().int().min(0).max(86_400).default(600),
  /** How often the daemon asks for changes. */
  pollIntervalSeconds: z.number().int().min(5).max(86_400).default(60),
});

export const googleWorkspaceSourceSchema = z
  .strictObject({
    type: z.literal('google-workspace'),
    /** The service account's JSON key file (a mounted secret). */
    serviceAccountKeyFile: secretFile(),
    /** A Workspace administrator the service account acts as (domain-wide delegation). */
    subject: z.string().email('must be the e-mail address of a Workspace administrator'),
    /** `my_customer` (the subject's own account) or a customer id like `C01abc23d`. */
    customer: z.string().min(1).optional(),
    /** Read one domain of the account instead of the whole customer. */
    domain: z.string().min(1).optional(),
    users: z
      .strictObject({
        /** Directory API user search, e.g. `orgUnitPath='/Staff'` or `HR.costCenter=CC-1`. */
        query: z.string().min(1).optional(),
        /** Custom schemas to read (`attributes.customSchemas.<Schema>.<field>`); default none. */
        customSchemas: z.array(z.string().min(1)).default([]),
      })
      .prefault({}),
    /** `false`: users only. */
    groups: z.union([z.literal(false), groupsSchema]).default({ flattenNested: true }),
    /** Directory API root; change only for a private endpoint or the simulator. */
    rootUrl: z.string().url().default('https://admin.googleapis.com/'),
    /** OAuth token endpoint; change only for a private endpoint or the simulator. */
    tokenUrl: z.string().url().default('https://oauth2.googleapis.com/token'),
    /** Plain http:// for rootUrl/tokenUrl, on loopback only (tests, the simulator). */
    allowInsecureHttp: z.boolean().default(false),
    /** Per request. */
    timeoutSeconds: z.number().positive().default(60),
    /** Group member lists read in parallel (Directory API quota: 2,400 queries/minute/user by default). */
    concurrency: z.number().int().min(1).max(32).default(4),
    /** Backoff for rate limits (429, 403 rateLimitExceeded/userRateLimitExceeded) and 5xx, per request. */
    retry: z
      .strictObject({
        maxAttempts: z.number().int().min(1).max(20).default(8),
        baseDelayMs: z.number().int().min(1).default(1000),
        maxDelayMs: z.number().int().min(1).default(64_000),
      })
      .prefault({}),
    /** An empty user list is an error unless set. */
    allowEmpty: z.boolean().default(false),
    /**
     * Change detection from the admin audit log (Reports API, `admin` application): needs
     * the admin.reports.audit.readonly scope in the delegation. `false`: full reads only.
     */
    changes: z.union([z.literal(false), changesSchema]).default(false),
  })
  .refine((c) => c.customer === undefined || c.domain === undefined, { message: 'set customer or domain, not both', path: ['domain'] })
  .superRefine((c, ctx) => {
    for (const key of ['rootUrl', 'tokenUrl'] as const) {
      try {
        assertSecureUrl(c[key], c.allowInsecureHttp, key);
      } catch (e) {
        ctx.addIssue({ code: 'custom', path: [key], message: e instanceof Error ? e.message : String(e) });
      }
    }
  });

export type GoogleWorkspaceSourceConfig = z.infer<typeof googleWorkspaceSourceSchema>;
export type GoogleWorkspaceSourceInput = z.input<typeof googleWorkspaceSourceSchema>;

export const SCOPES = {
  users: 'https://www.googleapis.com/auth/admin.directory.user.readonly',
  groups: 'https://www.googleapis.com/auth/admin.directory.group.readonly',
  members: 'https://www.googleapis.com/auth/admin.directory.group.member.readonly',
  reports: 'https://www.googleapis.com/auth/admin.reports.audit.readonly',
} as const;

/** The read-only scopes a config needs; nothing else is ever requested. */
export function scopesFor(c: Pick<GoogleWorkspaceSourceConfig, 'groups'> & { changes?: GoogleWorkspaceSourceConfig['changes'] }): string[] {
  const read = c.groups === false ? [SCOPES.users] : [SCOPES.users, SCOPES.groups, SCOPES.members];
  return c.changes ? [...read, SCOPES.reports] : read;
}
