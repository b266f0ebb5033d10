/**
 * Error classes with stable codes. Every failure is classified once, where it crosses a
 * boundary (HTTP response, socket, source read, config load); callers branch on `kind`
 * or `code`, never on message text. Messages never contain credentials.
 */

export type ErrorKind = 'transient' | 'not_found' | 'conflict' | 'rejected' | 'fatal';

export const ErrorCodes = {
  /** 401: the credential is missing, malformed or expired. */
  AUTH_INVALID: 'E_AUTH_INVALID',
  /** 403: the credential is valid but not authorized for this target. */
  AUTH_FORBIDDEN: 'E_AUTH_FORBIDDEN',
  /** The account lacks a feature the operation needs (e.g. the audit log on a non-enterprise plan). */
  FEATURE_DISABLED: 'E_FEATURE_DISABLED',
  NOT_FOUND: 'E_NOT_FOUND',
  CONFLICT: 'E_CONFLICT',
  /** Any other 4xx: the request itself was refused (bad attribute, invalid filter…). */
  REJECTED: 'E_REJECTED',
  /** 501 / 405 on an operation: the server does not support it (e.g. PATCH). */
  UNSUPPORTED: 'E_UNSUPPORTED',
  /** 408, 429, 5xx or a network failure that outlived the retry budget. */
  TRANSIENT: 'E_TRANSIENT',
  TIMEOUT: 'E_TIMEOUT',
  RESPONSE_TOO_LARGE: 'E_RESPONSE_TOO_LARGE',
  BAD_RESPONSE: 'E_BAD_RESPONSE',
  INSECURE_URL: 'E_INSECURE_URL',
  CONFIG_INVALID: 'E_CONFIG_INVALID',
  SOURCE_FAILED: 'E_SOURCE_FAILED',
  GUARD_TRIPPED: 'E_GUARD_TRIPPED',
  /** A write (non-GET) attempted through a read-only client: `plan` and connectivity checks never write. */
  READ_ONLY: 'E_READ_ONLY',
  /** A lookup found more than one object that could be the one meant; nothing is guessed. */
  AMBIGUOUS_MATCH: 'E_AMBIGUOUS_MATCH',
  /** The daemon's run lease was lost (expired, or taken over by a newer fencing token): the run stops without writing. */
  LEASE_LOST: 'E_LEASE_LOST',
  /** The daemon's fanned-out apply jobs disappeared from Redis (restarted without persistence, evicted, deleted). */
  JOBS_VANISHED: 'E_JOBS_VANISHED',
  /** The audit export answered a redirect (3xx): never followed, the token must not travel. */
  EXPORT_REDIRECT: 'E_EXPORT_REDIRECT',
  /** The audit export answered 204 or a body without a single byte. */
  EXPORT_EMPTY: 'E_EXPORT_EMPTY',
  /** The audit export answered something that is not CSV: a content type, an HTML page, a JSON body. */
  EXPORT_NOT_CSV: 'E_EXPORT_NOT_CSV',
  /** The audit export's first row is not a header naming a timestamp column. */
  EXPORT_NO_HEADER: 'E_EXPORT_NO_HEADER',
  /** The audit export's body ended before it was complete (mid-row, mid-chunk, short of Content-Length). */
  EXPORT_TRUNCATED: 'E_EXPORT_TRUNCATED',
  /** One CSV record of the audit export is larger than `audit.limits.maxRecordBytes`. */
  RECORD_TOO_LARGE: 'E_RECORD_TOO_LARGE',
  /** The audit export's server took longer than `audit.limits.windowDeadlineSeconds` for one window. */
  EXPORT_DEADLINE: 'E_EXPORT_DEADLINE',
  /** A paged listing claimed or delivered more than its bounds allow, or its pages disagree with its claim. */
  LISTING_TOO_LARGE: 'E_LISTING_TOO_LARGE',
  /** A paged listing took longer than its overall deadline. */
  LISTING_DEADLINE: 'E_LISTING_DEADLINE',
  /** Redis did not answer within `redis.connectTimeoutSeconds` (operator commands; the daemon waits instead). */
  REDIS_UNAVAILABLE: 'E_REDIS_UNAVAILABLE',
} as const;

export type ErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes];

export interface SyncErrorOptions {
  status?: number;
  /** Seconds the server asked us to wait (Retry-After), if any. */
  retryAfterSeconds?: number;
  /** SCIM `scimType` or the platform's error string, already stripped of secrets. */
  detail?: string;
  cause?: unknown;
}

export class SyncError extends Error {
  readonly code: ErrorCode;
  readonly kind: ErrorKind;
  readonly status: number | undefined;
  readonly retryAfterSeconds: number | undefined;
  readonly detail: string | undefined;

  constructor(code: ErrorCode, kind: ErrorKind, message: string, opts: SyncErrorOptions = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'SyncError';
    this.code = code;
    this.kind = kind;
    this.status = opts.status;
    this.retryAfterSeconds = opts.retryAfterSeconds;
    this.detail = opts.detail;
  }

  toJSON(): Record<string, unknown> {
    return { code: this.code, kind: this.kind, status: this.status, message: this.message, detail: this.detail };
  }
}

export class ConfigError extends SyncError {
  readonly issues: string[];
  constructor(message: string, issues: string[] = []) {
    super(ErrorCodes.CONFIG_INVALID, 'fatal', message);
    this.name = 'ConfigError';
    this.issues = issues;
  }
}

export class SourceError extends SyncError {
  constructor(message: string, opts: SyncErrorOptions = {}) {
    super(ErrorCodes.SOURCE_FAILED, 'fatal', message, opts);
    this.name = 'SourceError';
  }
}

export function isSyncError(e: unknown): e is SyncError {
  return e instanceof SyncError;
}

/** The string `code` of a thrown Node/undici/OS error (`ECONNRESET`, `UND_ERR_SOCKET`…), if it has one. */
export function errorCodeOf(e: unknown): string | undefined {
  const c = (e as { code?: unknown } | null)?.code;
  return typeof c === 'string' ? c : undefined;
}

/** Human text for the two auth failures, shared by every boundary that can meet them. */
export const AUTH_MESSAGES = {
  401: 'credential missing, malformed or expired (HTTP 401): check platform.token / platform.tokenFile',
  403: 'valid credential not authorized for this target (HTTP 403), e.g. a key scoped to other deployments or lacking a permission',
} as const;

/** Classify an HTTP status once. `detail` is the server's message, if it gave one. */
export function errorFromStatus(status: number, what: string, opts: { detail?: string; retryAfterSeconds?: number } = {}): SyncError {
  const suffix = opts.detail ? `: ${opts.detail}` : '';
  if (status === 401)
    return new SyncError(ErrorCodes.AUTH_INVALID, 'fatal', `${what}: ${AUTH_MESSAGES[401]}${suffix}`, { status, ...opts });
  if (status === 403)
    return new SyncError(ErrorCodes.AUTH_FORBIDDEN, 'fatal', `${what}: ${AUTH_MESSAGES[403]}${suffix}`, { status, ...opts });
  if (status === 404)
    return new SyncError(ErrorCodes.NOT_FOUND, 'not_found', `${what}: not found (HTTP 404)${suffix}`, { status, ...opts });
  if (status === 409) return new SyncError(ErrorCodes.CONFLICT, 'conflict', `${what}: conflict (HTTP 409)${suffix}`, { status, ...opts });
  if (status === 501 || status === 405)
    return new SyncError(ErrorCodes.UNSUPPORTED, 'rejected', `${what}: not supported by the server (HTTP ${status})${suffix}`, {
      status,
      ...opts,
    });
  if (status === 408 || status === 429 || status >= 500)
    return new SyncError(ErrorCodes.TRANSIENT, 'transient', `${what}: server busy or failing (HTTP ${status})${suffix}`, {
      status,
      ...opts,
    });
  if (status >= 400)
    return new SyncError(ErrorCodes.REJECTED, 'rejected', `${what}: rejected (HTTP ${status})${suffix}`, { status, ...opts });
  return new SyncError(ErrorCodes.BAD_RESPONSE, 'rejected', `${what}: unexpected HTTP ${status}${suffix}`, { status, ...opts });
}

/** Certificate verification failures (Node's and OpenSSL's codes): a trust problem, not a network one. */
const TLS_VERIFY_CODES = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'CERT_SIGNATURE_FAILURE',
]);

/** A certificate the configured trust refuses will not heal by retrying (the platform client and the sinks alike). */
export function isTlsVerifyError(code: string | undefined): boolean {
  return code !== undefined && TLS_VERIFY_CODES.has(code);
}
