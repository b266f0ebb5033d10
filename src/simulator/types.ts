/**
 * Public shapes of the platform simulator. Other modules (SCIM client, reconcile, audit
 * pipeline, benchmarks) code against these names, so they change only with care.
 */
import type { SimStore } from './store.ts';
import type { AuditSimOptions, SimAudit } from './audit-types.ts';
import type { ServerQuirk } from './quirks.ts';
import type { SimUserAttributes, UserAttributesSimOptions } from './user-attributes.ts';

export type { AuditSimOptions, SimAudit } from './audit-types.ts';
export type { ServerQuirk } from './quirks.ts';

export interface SimulatorToken {
  token: string;
  /**
   * 'scim' tokens are honoured on the SCIM surface only (403 on the platform API);
   * 'api-key' and undefined work everywhere (the spec says a SCIM token is an API key).
   */
  kind?: 'scim' | 'api-key';
  /** Deployments an API key is scoped to; undefined = unscoped (all). A scoped key gets 403 on SCIM. */
  deployments?: string[];
  /** e.g. ['AuditLogManage']; undefined = all permissions. */
  permissions?: string[];
}

export type FaultKind =
  | 'status'
  | 'reset'
  | 'reset-after-commit'
  | 'latency'
  | 'truncate'
  | 'drip'
  | 'lying-page'
  | 'capped-page'
  | 'changing-total'
  | 'duplicate-across-pages'
  | 'empty-page'
  | 'mutate-between-pages'
  | 'drop-events';

/**
 * One fault-injection rule. Every rule whose method/pathPrefix match a request is rolled
 * (rate) and, when it fires, counts against `times`. Latency rules add up; of the other
 * request-level kinds the first firing rule wins. List kinds apply only to collection
 * GETs (`/Users`, `/Groups`), so they never spend `times` on other requests.
 */
export interface FaultRule {
  /** HTTP method, case-insensitive; default any. */
  method?: string;
  /** Path prefix, e.g. '/api/scim/v2/Users'; matched against the path as sent and its
   * canonical form ('/scim/v2/…' is also tried as '/api/scim/v2/…'). Default all. */
  pathPrefix?: string;
  kind: FaultKind;
  /** 'status': the HTTP status to answer with (e.g. 503, 429, 500). Default 503. */
  status?: number;
  /** 'status': adds a Retry-After header (seconds). */
  retryAfterSeconds?: number;
  /** Probability 0..1 that a matching request triggers the rule (default 1). */
  rate?: number;
  /** Fire at most N times, then the rule is spent. */
  times?: number;
  /** 'latency': fixed delay plus uniform jitter, milliseconds. */
  latencyMs?: number;
  jitterMs?: number;
  /** 'truncate': bytes of the body sent before the socket is destroyed. Default: half of a
   * buffered body, 64 KiB of a streamed one. The cut never falls on a row boundary. */
  afterBytes?: number;
  /** 'drip': bytes per chunk (default 16) and pause between chunks in ms (default 5). */
  chunkBytes?: number;
  delayMs?: number;
  /** 'capped-page' / 'lying-page': resources actually returned (default half the requested count, at least 1). */
  pageSize?: number;
  /** 'changing-total': added to the reported totalResults (default +1; may be negative). */
  totalDelta?: number;
  /** 'duplicate-across-pages': 'shift' (default) starts the page one resource early, as an offset
   * server does after an unseen insert (the listing then misses one resource); 'extra' prepends the
   * previous page's last resource (the page is one longer than asked). Only pages with startIndex > 1. */
  duplicateMode?: 'shift' | 'extra';
  /** 'mutate-between-pages': after serving the page, 'delete' (default) the first resource of the
   * collection (later ones shift back: an offset client skips one), 'insert' a new one at the front,
   * or 'churn': delete the first and create a new one at the end, so totalResults stays the same
   * while every later resource shifts back by one (the silent skip a count check cannot see). */
  mutation?: 'delete' | 'insert' | 'churn';
  /** 'drop-events': audit-log export rows with a time in `[dropFrom, dropTo)` (ISO 8601) are left out of
   * the response, as a platform that lost them for that export would. Fires (and spends `times`) only
   * on exports whose window meets that range. */
  dropFrom?: string;
  dropTo?: string;
}

export interface RequestLogEntry {
  method: string;
  /** Path as sent, without the query string. */
  path: string;
  query: Record<string, string>;
  /** HTTP status sent; 0 when the socket was destroyed before a response. */
  status: number;
  /** Request body size in bytes. */
  bodyBytes: number;
  /** Parsed JSON request body (POST/PUT/PATCH), for asserting what a client sent. */
  body?: unknown;
  /** Fault kinds that fired on this request. */
  faults?: FaultKind[];
  /** Epoch milliseconds when the request arrived. */
  at: number;
}

export interface SimulatorOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0 (ephemeral). */
  port?: number;
  /** Serve HTTPS with this key/cert (PEM). Default plain HTTP. */
  tls?: { key: string | Buffer; cert: string | Buffer };
  /** Default [{ token: 'test-token' }]. */
  tokens?: SimulatorToken[];
  /** PRNG seed for generated data (users, audit events) and fault rolls. Default 1. */
  seed?: number;
  /** Pre-seed N realistic users (plus about one group per 50 users). */
  users?: number;
  /** Server-side cap on `count` and default page size. Default 100. */
  maxPageSize?: number;
  /** Default true; false => PATCH answers 501 and ServiceProviderConfig says patch.supported=false. */
  patchSupported?: boolean;
  /** Default true; false => /ServiceProviderConfig is 404. */
  serviceProviderConfig?: boolean;
  /** Which PATCH member-remove forms are accepted (default 'both'); a refused form => 400 invalidPath. */
  memberRemoveDialect?: 'filter' | 'value-array' | 'both';
  /** More member values (plus other operations) than this in one PATCH => 400 scimType tooMany. */
  maxOperationsPerPatch?: number;
  /** Default true. */
  auditFeatureEnabled?: boolean;
  audit?: AuditSimOptions;
  /** User-attribute endpoints: list shape (bare array or `{ data, pagination }`) and page cap. */
  userAttributes?: UserAttributesSimOptions;
  faults?: FaultRule[];
  /** Real-server behaviours to imitate (see quirks.ts, docs/simulator.md). Default none. */
  quirks?: ServerQuirk[];
  /** Called after each collection page was rendered, before it is sent: tests change the store here,
   * deterministically "between two page requests". */
  afterListPage?: (e: ListPageEvent) => void;
  /** Keep `requests` (default true). Long-running processes (the CLI) turn it off. */
  recordRequests?: boolean;
  /** Called once per finished request (the CLI logs these at debug level). */
  onRequest?: (entry: RequestLogEntry) => void;
}

export interface ListPageEvent {
  resourceType: 'Users' | 'Groups';
  /** startIndex as requested. */
  startIndex: number;
  /** Resources on the page just served. */
  returned: number;
  totalResults: number;
  filter: string | undefined;
  store: SimStore;
}

export interface Simulator {
  /** e.g. http://127.0.0.1:43567 (no trailing slash). */
  url: string;
  close(): Promise<void>;
  /** Direct access for tests: seed, inspect, create drift behind the client's back. */
  store: SimStore;
  setFaults(rules: FaultRule[]): void;
  requests: RequestLogEntry[];
  clearRequests(): void;
  audit: SimAudit;
  /** User-attribute definitions and values: seed, inspect, drift behind the client's back. */
  attributes: SimUserAttributes;
}
