/**
 * `provisioning.source.type: okta`: the Okta Management API through @okta/okta-sdk-nodejs,
 * as an API token (SSWS, from a file) or an OAuth 2.0 service app (client credentials with
 * a private-key JWT; the key from a file). Only read scopes are ever requested.
 */
import { z } from 'zod';
import { contentFile, secretFile } from '../../config/file-refs.ts';
import { assertSecureUrl } from '../../platform/secure-url.ts';

export const OKTA_USER_STATUSES = [
  'STAGED',
  'PROVISIONED',
  'ACTIVE',
  'RECOVERY',
  'PASSWORD_EXPIRED',
  'LOCKED_OUT',
  'SUSPENDED',
  'DEPROVISIONED',
] as const;
export type OktaUserStatus = (typeof OKTA_USER_STATUSES)[number];

/** Statuses that still hold a working identity: the person can (or soon will) sign in. */
export const DEFAULT_ACTIVE_STATUSES: OktaUserStatus[] = ['ACTIVE', 'PROVISIONED', 'RECOVERY', 'PASSWORD_EXPIRED', 'LOCKED_OUT'];

export const OKTA_GROUP_TYPES = ['OKTA_GROUP', 'APP_GROUP', 'BUILT_IN'] as const;

export const OKTA_SCOPES = { users: 'okta.users.read', groups: 'okta.groups.read' } as const;

const status = z.enum(OKTA_USER_STATUSES);

const groupsSchema = z
  .strictObject({
    /** Group types read: Okta groups and groups imported from applications (AD, LDAP, Workday…). */
    types: z.array(z.enum(OKTA_GROUP_TYPES)).min(1).default(['OKTA_GROUP', 'APP_GROUP']),
    /** Okta group search, ANDed with the types, e.g. `profile.name sw "eng-"`. */
    search: z.string().min(1).optional(),
    /** Group-member lists read in parallel. */
    concurrency: z.number().int().min(1).max(16).default(4),
  })
  .prefault({});

export const oktaSourceSchema = z
  .strictObject({
    type: z.literal('okta'),
    /** https://<your-org>.okta.com (or the custom domain). */
    orgUrl: z.string().url(),
    /** An SSWS API token (a mounted secret). Set this, or clientId + privateKeyFile. */
    apiTokenFile: secretFile().optional(),
    /** The OAuth 2.0 service app's client ID (0oa…). */
    clientId: z.string().min(1).optional(),
    /** The service app's private key, PEM or JWK (a mounted secret). */
    privateKeyFile: secretFile().optional(),
    /** The key's ID (`kid`) as registered in the app, when the app has several keys. */
    keyId: z.string().min(1).optional(),
    users: z
      .strictObject({
        /** Okta user search, ANDed with the statuses, e.g. `profile.department eq "Engineering"`. */
        search: z.string().min(1).optional(),
        /** Statuses read; a user in any other status is absent (and gets deprovisioned when managed). */
        statuses: z
          .array(status)
          .min(1)
          .default([...OKTA_USER_STATUSES]),
        /** Statuses read as `active: true`; every other status read is `active: false`. */
        activeStatuses: z.array(status).default(DEFAULT_ACTIVE_STATUSES),
      })
      .prefault({}),
    /** `false`: users only (and only okta.users.read is requested). */
    groups: z.union([z.literal(false), groupsSchema]).default({ types: ['OKTA_GROUP', 'APP_GROUP'], concurrency: 4 }),
    /** Extra CA bundle (PEM) trusted for orgUrl, next to the system's (a TLS-inspecting proxy). */
    caFile: contentFile().optional(),
    /** Allow http:// for orgUrl, on loopback only (tests, the simulator). */
    allowInsecureHttp: z.boolean().default(false),
    /** Per request. */
    timeoutSeconds: z.number().positive().default(60),
    /**
     * Requests are paced from X-Rate-Limit-Remaining/Reset: when a bucket is down to this
     * many requests, the next waits for the window to reset instead of drawing a 429.
     */
    rateLimitReserve: z.number().int().min(0).default(2),
    /** Backoff for 429s that happen anyway, 5xx, network failures and cut-short pages. */
    retry: z
      .strictObject({
        maxAttempts: z.number().int().min(1).max(20).default(6),
        baseDelayMs: z.number().int().min(1).default(1000),
        maxDelayMs: z.number().int().min(1).default(60_000),
      })
      .prefault({}),
    /** An empty user list is an error unless set. */
    allowEmpty: z.boolean().default(false),
  })
  .superRefine((c, ctx) => {
    const oauth = c.clientId !== undefined || c.privateKeyFile !== undefined;
    if (c.apiTokenFile !== undefined && oauth)
      ctx.addIssue({ code: 'custom', path: ['apiTokenFile'], message: 'set apiTokenFile, or clientId and privateKeyFile, not both' });
    else if (c.apiTokenFile === undefined && !oauth)
      ctx.addIssue({
        code: 'custom',
        path: ['apiTokenFile'],
        message: 'set apiTokenFile (API token) or clientId and privateKeyFile (service app)',
      });
    else if (oauth && (c.clientId === undefined || c.privateKeyFile === undefined))
      ctx.addIssue({
        code: 'custom',
        path: [c.clientId === undefined ? 'clientId' : 'privateKeyFile'],
        message: 'a service app needs both clientId and privateKeyFile',
      });
    try {
      assertSecureUrl(c.orgUrl, c.allowInsecureHttp, 'orgUrl');
    } catch (e) {
      ctx.addIssue({ code: 'custom', path: ['orgUrl'], message: e instanceof Error ? e.message : String(e) });
    }
    for (const s of c.users.activeStatuses)
      if (!c.users.statuses.includes(s))
        ctx.addIssue({ code: 'custom', path: ['users', 'activeStatuses'], message: `${s} is not among users.statuses` });
  });

export type OktaSourceConfig = z.infer<typeof oktaSourceSchema>;
export type OktaSourceInput = z.input<typeof oktaSourceSchema>;

/** The read-only scopes a config needs (OAuth service apps only). */
export function oktaScopesFor(c: Pick<OktaSourceConfig, 'groups'>): string[] {
  return c.groups === false ? [OKTA_SCOPES.users] : [OKTA_SCOPES.users, OKTA_SCOPES.groups];
}
