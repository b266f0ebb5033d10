/**
 * Google failures → SyncError, once, with the fix in the message. Two error shapes arrive
 * through gaxios: the token endpoint's `{error, error_description}` and the Directory API's
 * `{error: {code, message, errors: [{reason}], status, details}}`. Credential and consent
 * problems are config-class (exit 2, never retried); rate limits and 5xx are transient.
 */
import { ErrorCodes, SourceError, SyncError, errorCodeOf } from '../../errors.ts';

export interface GoogleErrorInfo {
  status: number | undefined;
  /** Token endpoint: `unauthorized_client`, `invalid_grant`…; API: the first `errors[].reason`. */
  reason: string | undefined;
  /** ErrorInfo reason from `details` (`SERVICE_DISABLED`, `ACCESS_TOKEN_SCOPE_INSUFFICIENT`). */
  detailReason: string | undefined;
  message: string;
  /** Seconds from Retry-After, when sent. */
  retryAfterSeconds: number | undefined;
  fromTokenEndpoint: boolean;
}

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj | undefined => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : undefined);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

export function googleErrorInfo(e: unknown): GoogleErrorInfo {
  const err = obj(e);
  const response = obj(err?.['response']);
  const status =
    typeof response?.['status'] === 'number'
      ? (response['status'] as number)
      : typeof err?.['status'] === 'number'
        ? (err['status'] as number)
        : undefined;
  const data = obj(response?.['data']);
  const headers = response?.['headers'] as { get?: (n: string) => string | null } | undefined;
  const ra = typeof headers?.get === 'function' ? headers.get('retry-after') : null;
  const retryAfterSeconds = ra !== null && ra !== undefined && /^\d+$/.test(ra.trim()) ? Number(ra) : undefined;
  const base = { status, retryAfterSeconds };
  if (data && typeof data['error'] === 'string') {
    const description = str(data['error_description']) ?? '';
    return { ...base, reason: data['error'], detailReason: undefined, message: description, fromTokenEndpoint: true };
  }
  const apiErr = obj(data?.['error']);
  if (apiErr) {
    const first = obj((apiErr['errors'] as unknown[] | undefined)?.[0]);
    const details = (apiErr['details'] as unknown[] | undefined) ?? [];
    const info = details.map(obj).find((d) => d?.['@type'] === 'type.googleapis.com/google.rpc.ErrorInfo');
    return {
      ...base,
      reason: str(first?.['reason']),
      detailReason: str(info?.['reason']),
      message: str(apiErr['message']) ?? '',
      fromTokenEndpoint: false,
    };
  }
  return {
    ...base,
    reason: undefined,
    detailReason: undefined,
    message: e instanceof Error ? e.message : String(e),
    fromTokenEndpoint: false,
  };
}

const RATE_LIMIT_REASONS = new Set(['rateLimitExceeded', 'userRateLimitExceeded', 'quotaExceeded']);
const NETWORK_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ETIMEDOUT',
  'EPIPE',
  'EAI_AGAIN',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/** Worth another attempt: rate limits (429, 403 with a rate-limit reason), 408, 5xx but 501, network failures. */
export function isRetryable(e: unknown): boolean {
  if (e instanceof TruncatedPageError) return true;
  const i = googleErrorInfo(e);
  if (i.status !== undefined) {
    if (i.status === 429 || i.status === 408) return true;
    if (i.status === 403 && i.reason !== undefined && RATE_LIMIT_REASONS.has(i.reason)) return true;
    return i.status >= 500 && i.status !== 501;
  }
  const code = errorCodeOf(e) ?? errorCodeOf((e as { cause?: unknown } | null)?.cause);
  if (code !== undefined && NETWORK_CODES.has(code)) return true;
  // fetch reports a connection dropped mid-body as a TypeError('terminated').
  return (
    e instanceof Error &&
    /terminated|socket hang up|other side closed|fetch failed/i.test(`${e.message} ${String((e as { cause?: unknown }).cause ?? '')}`)
  );
}

/** A 200 whose body is not the expected JSON object (cut short, or not JSON). */
export class TruncatedPageError extends Error {}

export interface ClassifyContext {
  /** e.g. `users.list page 7`. */
  what: string;
  clientEmail: string;
  clientId: string;
  subject: string;
  scopes: readonly string[];
}

export const DELEGATION_PATH = 'Admin console → Security → Access and data control → API controls → Manage Domain Wide Delegation';

/** Classify a final (non-retried or retries-exhausted) failure. */
export function googleError(e: unknown, ctx: ClassifyContext, attempts = 1): SyncError {
  if (e instanceof SyncError) return e;
  const i = googleErrorInfo(e);
  // The raw gaxios error carries the request (bearer token, signed assertion): keep only what Google said.
  const cause = new Error(`${i.status ?? errorCodeOf(e) ?? 'error'}${i.reason ? ` ${i.reason}` : ''}: ${i.message.split('\n')[0]}`);
  const opts = { cause, ...(i.status !== undefined ? { status: i.status } : {}), ...(i.reason !== undefined ? { detail: i.reason } : {}) };
  const said = i.message ? ` (Google: ${i.reason ?? i.status}: ${i.message.split('\n')[0]})` : '';
  const fatal = (code: (typeof ErrorCodes)[keyof typeof ErrorCodes], text: string): SyncError => new SyncError(code, 'fatal', text, opts);

  if (i.fromTokenEndpoint) {
    const msg = i.message;
    if (i.reason === 'unauthorized_client') {
      return fatal(
        ErrorCodes.AUTH_FORBIDDEN,
        `Google refused a token for ${ctx.subject}: domain-wide delegation is not granted to client ID ${ctx.clientId} (${ctx.clientEmail}) for all of ${ctx.scopes.join(', ')}. Fix: ${DELEGATION_PATH} → add client ID ${ctx.clientId} with exactly these scopes`,
      );
    }
    if (i.reason === 'invalid_grant' && /signature/i.test(msg)) {
      return fatal(
        ErrorCodes.AUTH_INVALID,
        `Google rejected the signature of the service account key for ${ctx.clientEmail}: serviceAccountKeyFile is not a current key of that account (deleted or rotated?). Fix: create a key under IAM & Admin → Service accounts → ${ctx.clientEmail} → Keys and mount it${said}`,
      );
    }
    if (i.reason === 'invalid_grant' && /account not found/i.test(msg)) {
      return fatal(
        ErrorCodes.AUTH_INVALID,
        `Google does not know the service account ${ctx.clientEmail} (deleted or disabled?): check serviceAccountKeyFile${said}`,
      );
    }
    if (i.reason === 'invalid_grant' && /email or user id/i.test(msg)) {
      return fatal(
        ErrorCodes.AUTH_INVALID,
        `subject ${ctx.subject} is not a user of this Google Workspace: set subject to the primary e-mail of a Workspace administrator${said}`,
      );
    }
    if (i.reason === 'invalid_grant' && /iat and exp|timeframe/i.test(msg)) {
      return fatal(
        ErrorCodes.AUTH_INVALID,
        `Google refused the token request's timestamps: this machine's clock is off; synchronise it (NTP)${said}`,
      );
    }
    if (i.reason === 'invalid_client' || i.reason === 'invalid_grant' || i.reason === 'invalid_scope') {
      return fatal(ErrorCodes.AUTH_INVALID, `Google refused a token for ${ctx.clientEmail} acting as ${ctx.subject}${said}`);
    }
  }
  if (i.status === 403 && (i.reason === 'accessNotConfigured' || i.detailReason === 'SERVICE_DISABLED')) {
    const project = /project (\d+)/.exec(i.message)?.[1];
    return fatal(
      ErrorCodes.AUTH_FORBIDDEN,
      `the Admin SDK API is not enabled in the service account's Google Cloud project${project ? ` ${project}` : ''}: enable it (APIs & Services → Library → Admin SDK API${project ? `, https://console.developers.google.com/apis/api/admin.googleapis.com/overview?project=${project}` : ''}), wait a few minutes, retry`,
    );
  }
  if (i.status === 403 && (i.reason === 'insufficientPermissions' || i.detailReason === 'ACCESS_TOKEN_SCOPE_INSUFFICIENT')) {
    return fatal(
      ErrorCodes.AUTH_FORBIDDEN,
      `${ctx.what}: the access token lacks a scope this read needs (${ctx.scopes.join(', ')}). Fix: ${DELEGATION_PATH} → client ID ${ctx.clientId} → add the scope`,
    );
  }
  if (i.status === 403 && (i.reason === 'forbidden' || /not authorized/i.test(i.message))) {
    return fatal(
      ErrorCodes.AUTH_FORBIDDEN,
      `${ctx.what}: ${ctx.subject} may not read the directory: subject must be a Workspace administrator with read access to users and groups (and customer/domain must be this account's)${said}`,
    );
  }
  if (i.status === 401) return fatal(ErrorCodes.AUTH_INVALID, `${ctx.what}: Google refused the access token${said}`);
  if (i.status === 400 && !i.fromTokenEndpoint) {
    return fatal(
      ErrorCodes.CONFIG_INVALID,
      `${ctx.what}: Google refused the request: check customer/domain and the users/groups query${said}`,
    );
  }
  if (i.status === 404) return new SourceError(`${ctx.what}: not found${said}`, opts);
  const tries = attempts > 1 ? ` after ${attempts} attempts` : '';
  if (e instanceof TruncatedPageError)
    return new SourceError(`${ctx.what}: the response was cut short or not JSON${tries}; nothing was changed`, opts);
  if (i.status !== undefined)
    return new SourceError(
      `${ctx.what} failed${tries} (HTTP ${i.status}${i.reason ? ` ${i.reason}` : ''}); nothing was changed${said}`,
      opts,
    );
  const code = errorCodeOf(e) ?? errorCodeOf((e as { cause?: unknown } | null)?.cause);
  return new SourceError(`${ctx.what} failed${tries}: ${code ?? i.message.split('\n')[0]}; nothing was changed`, opts);
}
