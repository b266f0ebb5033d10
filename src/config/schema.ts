/**
 * The configuration schema, validated once at load. Keys carry their unit; alternatives
 * are chosen by `type`; defaults live here and nowhere else.
 */
import { z } from 'zod';
import { listingLimitsSchema } from '../platform/scim/listing-limits.ts';
import { sourceSchema } from '../sources/schema.ts';
import { auditSchema } from '../audit/config-schema.ts';
import { provisioningLogSchema } from '../provisioning-log/config-schema.ts';
import { uiSchema } from '../ui/config-schema.ts';
import { assertSecureUrl } from '../platform/secure-url.ts';
import { contentFile, secretFile } from './file-refs.ts';
import { userAttributeSyncSchema, userAttributesSchema } from '../reconcile/attributes/config-schema.ts';
import { TARGETED_LIMITS } from '../reconcile/targeted/types.ts';

const secretFields = {
  token: z.string().min(1, 'is empty: is the environment variable it comes from set?').optional(),
  /** File holding the token (a mounted Kubernetes secret); trailing newline ignored. */
  tokenFile: secretFile().optional(),
};

const BASE_URL_HINT = 'must be a URL like https://acme.example.com';

export const retrySchema = z.strictObject({
  maxAttempts: z.number().int().min(1).max(20).default(6),
  baseDelayMs: z.number().int().min(1).default(200),
  maxDelayMs: z.number().int().min(1).default(30_000),
  maxRetryAfterSeconds: z.number().int().min(0).default(120),
});

export const platformSchema = z
  .strictObject({
    baseUrl: z.string({ error: BASE_URL_HINT }).url({ protocol: /^https?$/, error: BASE_URL_HINT }),
    ...secretFields,
    /** Token of the platform API (`/api/v1`, user attributes) when it differs from the SCIM token; default: the SCIM token. */
    apiToken: z.string().min(1, 'is empty: is the environment variable it comes from set?').optional(),
    apiTokenFile: secretFile().optional(),
    authScheme: z.enum(['Bearer', 'Api-Key']).default('Bearer'),
    scimPath: z.string().startsWith('/').default('/api/scim/v2'),
    allowInsecureHttp: z.boolean().default(false),
    /** Extra CA bundle (PEM) for a private endpoint. */
    caFile: contentFile().optional(),
    maxConnections: z.number().int().min(1).max(512).default(32),
    timeoutSeconds: z.number().positive().default(30),
    maxResponseMegabytes: z.number().positive().default(32),
    retry: retrySchema.prefault({}),
    /** Per-target SCIM dialect: how this server wants to be spoken to. */
    scim: z
      .strictObject({
        /** Requested page size for list calls; the server may cap it. */
        pageSize: z.number().int().min(1).max(1000).default(100),
        /** Maximum member add/remove values in one PATCH request. */
        maxMembersPerPatch: z.number().int().min(1).max(10_000).default(100),
        /** `filter`: path `members[value eq "id"]`; `value-array`: path `members` with `value: [{value}]`. */
        memberRemoveDialect: z.enum(['filter', 'value-array']).default('filter'),
        /** `auto` reads /ServiceProviderConfig and falls back to PUT when PATCH is refused. */
        updateMethod: z.enum(['auto', 'patch', 'put']).default('auto'),
        /** Read /ServiceProviderConfig to adapt (patch support, filter support, maxResults). */
        discover: z.boolean().default(true),
        /** Bounds on one listing of Users or Groups, whatever totalResults claims. */
        listing: listingLimitsSchema,
      })
      .prefault({}),
  })
  .refine((p) => (p.token === undefined) !== (p.tokenFile === undefined), {
    message: 'set exactly one of platform.token (e.g. "${SCIM_TOKEN}") or platform.tokenFile (a mounted secret file)',
    path: ['token'],
  })
  .refine((p) => p.apiToken === undefined || p.apiTokenFile === undefined, {
    message: 'set at most one of platform.apiToken or platform.apiTokenFile (neither: the SCIM token is used)',
    path: ['apiToken'],
  })
  .superRefine((p, ctx) => {
    // The same rule the HTTP client enforces, reported at load rather than at first request.
    if (!/^https?:\/\//i.test(p.baseUrl)) return; // the URL check above already reported it
    try {
      assertSecureUrl(p.baseUrl, p.allowInsecureHttp);
    } catch (e) {
      ctx.addIssue({ code: 'custom', path: ['baseUrl'], message: (e as Error).message });
    }
  });

export interface MappingRule {
  from?: string | undefined;
  template?: string | undefined;
  value?: string | number | boolean | undefined;
  transform?: 'lower' | 'upper' | 'trim' | undefined;
  createOnly: boolean;
}

const mappingRuleSchema = z.union([
  z
    .string()
    .min(1)
    .transform((from): MappingRule => ({ from, createOnly: false })),
  z
    .strictObject({
      /** Dotted path into the normalized user/group, e.g. `attributes.department`. */
      from: z.string().min(1).optional(),
      /** `{givenName}.{familyName}@example.com`; placeholders are normalized field paths. */
      template: z.string().min(1).optional(),
      /** A constant. */
      value: z.union([z.string(), z.number(), z.boolean()]).optional(),
      transform: z.enum(['lower', 'upper', 'trim']).optional(),
      /** Set on create only; never compared or updated afterwards. */
      createOnly: z.boolean().default(false),
    })
    .refine((r) => [r.from, r.template, r.value].filter((x) => x !== undefined).length === 1, {
      message: 'a mapping rule needs exactly one of `from`, `template` or `value`',
    }),
]);

/** How e-mail `type` labels are sent (docs/reconcile.md, "E-mail types"). */
export const emailsSchema = z
  .strictObject({
    /** Type of an address the source gives no type for. */
    type: z.string().min(1).default('work'),
    /** `default`: the source's type, else `type`; `unique`: no two addresses of a user share a type; `none`: no type at all. */
    typeMode: z.enum(['default', 'unique', 'none']).default('default'),
    /** `unique`: the types handed out, in order, to addresses whose type is missing or taken. */
    uniqueTypes: z.array(z.string().min(1)).min(1).default(['work', 'home', 'other']),
  })
  .prefault({});
export type EmailsConfig = z.infer<typeof emailsSchema>;

export const provisioningSchema = z.strictObject({
  source: sourceSchema,
  emails: emailsSchema,
  /** Extra SCIM attribute paths (core, enterprise extension or vendor URN) → rule. */
  mapping: z
    .strictObject({
      user: z.record(z.string().min(1), mappingRuleSchema).default({}),
      group: z.record(z.string().min(1), mappingRuleSchema).default({}),
    })
    .prefault({}),
  /** Platform user attributes (data access: region, department…) ← source values; docs/user-attributes.md. */
  userAttributes: userAttributesSchema,
  userAttributeSync: userAttributeSyncSchema,
  /** SCIM filter expressions over normalized source objects; out-of-scope objects are not provisioned. */
  scope: z
    .strictObject({
      users: z.string().min(1).optional(),
      groups: z.string().min(1).optional(),
    })
    .prefault({}),
  matching: z
    .strictObject({
      /** Take over an existing platform object that matches by externalId or userName but that we did not create. */
      adoptExisting: z.boolean().default(false),
      /**
       * Let a source user take, by userName, the account of a person absent from the source (a
       * leaver) under a new externalId. Off: that is an identity conflict (reconcile.md); the account
       * is handed over only with `ledger reassign`. On: the handover clears what the account held.
       */
      handOverLeaverAccountsByName: z.boolean().default(false),
    })
    .prefault({}),
  ownership: z
    .strictObject({
      /** `ledger`: objects we created or adopted (state store); `externalId`: any platform object with an externalId. */
      mode: z.enum(['ledger', 'externalId']).default('ledger'),
    })
    .prefault({}),
  deprovision: z
    .strictObject({
      action: z.enum(['deactivate', 'delete', 'none']).default('deactivate'),
      /** Delete managed groups that left the source. */
      deleteGroups: z.boolean().default(true),
      /** With `deactivate`: delete a user this many days after deactivation (daemon only; 0 = never). */
      deleteAfterDays: z.number().int().min(0).default(0),
    })
    .prefault({}),
  guards: z
    .strictObject({
      /** Max deactivations + deletions in one run. */
      maxDeletes: z.number().int().min(0).default(50),
      /** Max deactivations + deletions as a percentage of managed objects. */
      maxDeletePercent: z.number().min(0).max(100).default(20),
      /** Max group member removals in one run. */
      maxMemberRemovals: z.number().int().min(0).default(500),
      /** Max member removals as a percentage of the members of the managed groups the source lists. */
      maxMemberRemovalPercent: z.number().min(0).max(100).default(50),
      /** Max user attribute values cleared (or access-relevant values taken away) in one run. */
      maxAttributeClears: z.number().int().min(0).default(50),
      /** Max share of the users whose attributes are synced that lose a value in one run, percent. */
      maxAttributeClearPercent: z.number().min(0).max(100).default(20),
    })
    .prefault({}),
  /**
   * `authoritative`: a member is removed when it maps to a person the source does not place in
   * the group; `additive`: members are only ever added. Neither removes a person the source lists.
   */
  membership: z.enum(['authoritative', 'additive']).default('authoritative'),
  /** Change-driven sync: the daemon (and `watch`) apply source changes as they come; docs/daemon.md, "Change-driven sync". */
  changes: z
    .strictObject({
      /** On for every source that can report its changes (sources/changes.ts); the full reconcile stays as drift repair. */
      enabled: z.boolean().default(true),
      /** Changes arriving within this window are applied as one batch (the latest record of each identity wins), ms. */
      coalesceMs: z.number().int().min(0).max(60_000).default(1_000),
      /** How often the source is asked for changes, ms (default: the source's mechanism decides). */
      pollIntervalMs: z.number().int().min(100).max(3_600_000).optional(),
      /**
       * A targeted run reads each affected platform group whole (one GET returns every member);
       * a group with more members than this is left to a full reconcile (defer `group-too-large`).
       */
      maxGroupMembers: z.number().int().min(0).max(10_000_000).default(TARGETED_LIMITS.maxGroupMembers),
      /** Rolling window over which destructive changes count toward provisioning.guards, minutes. */
      burstWindowMinutes: z
        .number()
        .positive()
        .max(7 * 24 * 60)
        .default(60),
    })
    .prefault({}),
  apply: z
    .strictObject({
      concurrency: z.number().int().min(1).max(256).default(8),
      /** Cap on platform requests per second for this run; 0 = no cap. */
      requestsPerSecond: z.number().min(0).default(0),
    })
    .prefault({}),
});

export const stateSchema = z
  .strictObject({
    /** Directory for the one-shot state file (ownership ledger, audit cursor) when Redis is not used. */
    dir: z.string().min(1).default('.scim-audit-sync'),
  })
  .prefault({});

const hostPortSchema = z.strictObject({ host: z.string().min(1), port: z.number().int().min(1).max(65535) });

export const redisSchema = z
  .strictObject({
    /** redis:// or rediss:// URL; credentials belong in passwordFile, not in the URL. */
    url: z.string().min(1).default('redis://127.0.0.1:6379'),
    username: z.string().min(1).optional(),
    passwordFile: secretFile().optional(),
    /** Prefix of every key this tool writes (BullMQ queues and state); wrapped in {…} so Cluster keeps a tenant's keys in one slot. */
    keyPrefix: z
      .string()
      .regex(/^[A-Za-z0-9_-]+$/, 'use letters, digits, - and _ only')
      .default('scimsync'),
    /** TLS towards Redis (also implied by a rediss:// URL). */
    tls: z
      .strictObject({
        enabled: z.boolean().default(false),
        caFile: contentFile().optional(),
        rejectUnauthorized: z.boolean().default(true),
        servername: z.string().optional(),
      })
      .prefault({}),
    /** Redis Sentinel: the url's host is ignored; the master is found through these sentinels. */
    sentinel: z.strictObject({ name: z.string().min(1), nodes: z.array(hostPortSchema).min(1) }).optional(),
    /** Redis Cluster seed nodes; BullMQ keys use a hash-tagged prefix so each queue stays in one slot. */
    cluster: z.strictObject({ nodes: z.array(hostPortSchema).min(1) }).optional(),
    /** Operator commands give up on an unreachable Redis after this long; also ioredis's connect timeout. */
    connectTimeoutSeconds: z.number().positive().default(10),
    /** How long a Redis failover may take (Cluster: cluster-node-timeout plus the election); commands wait that long for the new master. */
    failoverTimeoutSeconds: z.number().positive().max(600).default(30),
  })
  .refine((r) => !(r.sentinel && r.cluster), { message: 'choose either redis.sentinel or redis.cluster, not both', path: ['cluster'] });

/** Cron schedules (UTC) of the daemon's jobs for one tenant. */
export const schedulesSchema = z
  .strictObject({
    /**
     * Without a pattern: every 30 minutes, or every 6 hours when the tenant's source reports its
     * changes and provisioning.changes is on (the full reconcile is then drift repair only).
     */
    reconcile: z.strictObject({ pattern: z.string().min(9).optional(), enabled: z.boolean().default(true) }).prefault({}),
    audit: z.strictObject({ pattern: z.string().min(9).default('*/5 * * * *'), enabled: z.boolean().default(true) }).prefault({}),
    /** `audit verify` of the recent past (docs/audit.md#verify); off by default: it re-exports the range. */
    auditVerify: z
      .strictObject({
        pattern: z.string().min(9).default('40 3 * * *'),
        enabled: z.boolean().default(false),
        /** How far back each run verifies (before now); windows not settled yet are left for the next one. */
        lookbackHours: z
          .number()
          .int()
          .min(1)
          .max(366 * 24)
          .default(48),
      })
      .prefault({}),
  })
  .prefault({});

export const daemonSchema = z
  .strictObject({
    http: z
      .strictObject({ host: z.string().min(1).default('0.0.0.0'), port: z.number().int().min(0).max(65535).default(9464) })
      .prefault({}),
    /** Bound for SIGTERM: finish or abandon the current job within this time (keep below the pod's terminationGracePeriodSeconds). */
    shutdownTimeoutSeconds: z.number().positive().default(20),
    /** Jobs per process at once, per queue. */
    concurrency: z
      .strictObject({
        reconcile: z.number().int().min(1).max(64).default(2),
        audit: z.number().int().min(1).max(64).default(2),
        apply: z.number().int().min(1).max(256).default(8),
      })
      .prefault({}),
    /** Tasks per fanned-out apply child job. */
    applyChunkSize: z.number().int().min(1).max(10_000).default(25),
    /** Platform requests per second per tenant, shared by every replica (0 = no limit). */
    rateLimit: z.strictObject({ requestsPerSecond: z.number().min(0).default(50) }).prefault({}),
    /** Attempts of a failed job (transient errors); config/credential errors are never retried. */
    jobAttempts: z.number().int().min(1).max(20).default(3),
    /** Lock of a running job, renewed while it runs: a dead replica's jobs are taken over once it lapses (BullMQ lockDuration; stalled check every half of it). */
    jobLockSeconds: z.number().min(1).max(600).default(30),
    quarantine: z
      .strictObject({
        /** Consecutive failed runs before a tenant is quarantined. */
        maxConsecutiveFailures: z.number().int().min(1).default(3),
        /** A run whose failed operations exceed this share (with at least minOperations) counts as failed. */
        failureRatePercent: z.number().min(1).max(100).default(50),
        minOperations: z.number().int().min(1).default(10),
        baseBackoffMinutes: z.number().positive().default(5),
        maxBackoffHours: z.number().positive().max(24).default(24),
      })
      .prefault({}),
    /** Run records kept per tenant and job kind. */
    historyLength: z.number().int().min(1).max(1000).default(50),
    /** The status page (/ui) on its own server and port, behind a sign-in; docs/daemon.md. */
    ui: uiSchema,
  })
  .prefault({});

export const loggingSchema = z
  .strictObject({
    level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace']).default('info'),
  })
  .prefault({});

export const configSchema = z.strictObject({
  /** Tenant id used in state keys, metrics and logs (low-cardinality, not secret). */
  tenant: z
    .string()
    .regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, 'use lower-case letters, digits, - and _ (max 63 chars)')
    .default('default'),
  platform: platformSchema,
  provisioning: provisioningSchema.optional(),
  audit: auditSchema.optional(),
  /** Retention and sink delivery of the provisioning log (docs/provisioning-log.md). */
  provisioningLog: provisioningLogSchema,
  state: stateSchema,
  /** When set, state (ledger, audit cursor, dead letters) lives in Redis instead of state.dir. */
  redis: redisSchema.optional(),
  logging: loggingSchema,
  schedules: schedulesSchema,
  daemon: daemonSchema,
});

/** Keys shared by every tenant of a multi-tenant file; each `tenants[]` entry holds the rest. */
export const SHARED_KEYS = ['state', 'redis', 'logging', 'daemon'] as const;

export type RawConfig = z.input<typeof configSchema>;
export type Config = z.infer<typeof configSchema>;
export type RedisConfig = z.infer<typeof redisSchema>;
export type DaemonConfig = z.infer<typeof daemonSchema>;
export type SchedulesConfig = z.infer<typeof schedulesSchema>;
export type PlatformConfig = z.infer<typeof platformSchema>;
export type ProvisioningConfig = z.infer<typeof provisioningSchema>;
