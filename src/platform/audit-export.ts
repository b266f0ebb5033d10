/**
 * The audit-log export request: `GET /api/v1/audit-logs/export` streamed as CSV through the
 * platform client (same auth, retries before the body starts, error classes). The
 * endpoint's window semantics are undocumented, so callers filter client-side; this module
 * only formats the bounds and classifies the refusals once, with actionable messages.
 */
import type { Readable } from 'node:stream';
import { ErrorCodes, SyncError, isSyncError } from '../errors.ts';
import type { PlatformClient, StreamResponse } from './http-client.ts';
import { isCsvMediaType, mediaType } from './audit-export-contract.ts';
import { readBodyCapped } from './read-body.ts';

export const AUDIT_EXPORT_PATH = '/api/v1/audit-logs/export';
export const AUDIT_EXPORT_ROUTE = 'audit_export';

/** `date`: the server is sent `YYYY-MM-DD`; `datetime`: full ISO 8601 instants (UTC, second precision). */
export type AuditExportPrecision = 'date' | 'datetime';

export interface AuditExportFilters {
  eventName?: string | undefined;
  userEmail?: string | undefined;
  search?: string | undefined;
}

export interface AuditExportRequest extends AuditExportFilters {
  /** Inclusive start sent to the server, epoch ms (already aligned to the precision by the caller). */
  startMs: number;
  /** End sent to the server, epoch ms; whether the server treats it as inclusive is unknown. */
  endMs: number;
  precision: AuditExportPrecision;
  signal?: AbortSignal | undefined;
}

export interface AuditExportResponse {
  body: Readable;
  contentType: string;
  /** The query actually sent (no secrets), for logs and dead-letter context. */
  query: Record<string, string>;
}

const FEATURE_DISABLED_TEXT = /feature|not enabled|disabled|enterprise|plan/i;
const PERMISSION_HINT = 'the token needs the AuditLogManage permission';
const FEATURE_HINT =
  'the audit-log feature is not enabled for this account (it needs the enterprise plan): ask the platform administrator to enable it';

export function formatExportBound(ms: number, precision: AuditExportPrecision): string {
  const iso = new Date(ms).toISOString();
  return precision === 'date' ? iso.slice(0, 10) : `${iso.slice(0, 19)}Z`;
}

export function buildExportQuery(req: AuditExportRequest): Record<string, string> {
  const query: Record<string, string> = {
    start: formatExportBound(req.startMs, req.precision),
    end: formatExportBound(req.endMs, req.precision),
  };
  if (req.eventName) query['eventName'] = req.eventName;
  if (req.userEmail) query['userEmail'] = req.userEmail;
  if (req.search) query['search'] = req.search;
  return query;
}

/** Whether an error means "this run cannot succeed until a human acts" (no retry, no cursor movement). */
export function isFatalExportError(e: unknown): boolean {
  return isSyncError(e) && e.kind !== 'transient';
}

function featureDisabled(status: number | undefined, detail: string | undefined): SyncError {
  return new SyncError(
    ErrorCodes.FEATURE_DISABLED,
    'fatal',
    `audit-log export: ${FEATURE_HINT}${detail ? ` (server said: ${detail})` : ''}`,
    {
      ...(status !== undefined ? { status } : {}),
      ...(detail ? { detail } : {}),
    },
  );
}

/** Re-classify the client's generic error with what this endpoint's refusals mean. */
function classify(e: unknown): unknown {
  if (!isSyncError(e)) return e;
  const detail = e.detail;
  if (detail && FEATURE_DISABLED_TEXT.test(detail) && (e.status === 402 || e.status === 403 || e.status === 404)) {
    return featureDisabled(e.status, detail);
  }
  if (e.code === ErrorCodes.AUTH_FORBIDDEN) {
    return new SyncError(e.code, 'fatal', `${e.message}; ${PERMISSION_HINT}`, {
      ...(e.status !== undefined ? { status: e.status } : {}),
      ...(detail ? { detail } : {}),
      cause: e,
    });
  }
  if (e.code === ErrorCodes.NOT_FOUND) {
    return new SyncError(
      e.code,
      'fatal',
      `${e.message}; the audit-log export exists only on the hosted platform (check platform.baseUrl)`,
      { ...(e.status !== undefined ? { status: e.status } : {}), ...(detail ? { detail } : {}), cause: e },
    );
  }
  return e;
}

/** The start of a body for a message; a body that breaks off gives what arrived before (or nothing). */
async function readSmall(body: Readable, limit: number): Promise<string> {
  try {
    return (await readBodyCapped(body, limit)).text.slice(0, limit);
  } catch {
    return '';
  }
}

/**
 * A 2xx whose body is JSON is the platform's `{ "error": "…" }` envelope, not a CSV: classify
 * it instead of parsing it as one event-less export (which would silently move the cursor).
 */
async function classifyJsonBody(body: Readable, status: number): Promise<SyncError> {
  const text = await readSmall(body, 64 * 1024); // bytes
  let message: string | undefined;
  try {
    const parsed = JSON.parse(text) as Record<string, unknown>;
    const m = parsed['error'] ?? parsed['message'];
    message = typeof m === 'string' ? m : undefined;
  } catch {
    message = undefined;
  }
  const detail = message?.replace(/\s+/g, ' ').slice(0, 300);
  if (detail && FEATURE_DISABLED_TEXT.test(detail)) return featureDisabled(status, detail);
  return new SyncError(
    ErrorCodes.EXPORT_NOT_CSV,
    'transient',
    `audit-log export: expected a CSV attachment, got a JSON body (HTTP ${status})${detail ? `: ${detail}` : ''}`,
    {
      status,
      ...(detail ? { detail } : {}),
    },
  );
}

/** Nobody reads this body: the abort error the destroy emits is not a failure. */
function discard(body: Readable): void {
  body.on('error', () => undefined);
  body.destroy();
}

/** Where a redirect pointed, without its path and query (they may carry anything). */
function redirectTarget(location: string | string[] | undefined): string {
  const raw = Array.isArray(location) ? location[0] : location;
  if (!raw) return 'no Location';
  try {
    return new URL(raw, 'http://relative.invalid').origin.replace('http://relative.invalid', 'the same host');
  } catch {
    return 'an invalid Location';
  }
}

/**
 * Checks an answer's status and content type against the export contract
 * (audit-export-contract.ts) before a byte of its body counts; the body's own checks
 * (not HTML or JSON, a header row, complete) are made as it is read (src/audit/csv/read-csv.ts).
 */
async function checkResponse(status: number, headers: Record<string, string | string[] | undefined>, body: Readable): Promise<void> {
  if (status >= 300 && status < 400) {
    discard(body);
    throw new SyncError(
      ErrorCodes.EXPORT_REDIRECT,
      'transient',
      `audit-log export answered a redirect (HTTP ${status} to ${redirectTarget(headers['location'])}); redirects are never followed (the token must not travel): check platform.baseUrl and any proxy in front of the platform`,
      { status },
    );
  }
  if (status === 204) {
    discard(body);
    throw new SyncError(ErrorCodes.EXPORT_EMPTY, 'transient', 'audit-log export answered 204 No Content: not an export', { status });
  }
  if (status !== 200) {
    discard(body);
    throw new SyncError(ErrorCodes.BAD_RESPONSE, 'transient', `audit-log export answered HTTP ${status}, expected 200`, { status });
  }
  const rawType = headers['content-type'];
  const contentType = (Array.isArray(rawType) ? rawType[0] : rawType) ?? '';
  if (/\bjson\b/i.test(contentType)) throw await classifyJsonBody(body, status);
  if (!isCsvMediaType(contentType)) {
    discard(body);
    const html = /\bhtml\b/i.test(contentType);
    throw new SyncError(
      ErrorCodes.EXPORT_NOT_CSV,
      'transient',
      html
        ? `audit-log export: expected a CSV attachment, got an HTML page (HTTP ${status}); check platform.baseUrl (a proxy or login page answered)`
        : `audit-log export: expected a CSV attachment, got content type ${mediaType(contentType).slice(0, 60)} (HTTP ${status})`,
      { status },
    );
  }
  if (headers['content-length'] === '0') {
    discard(body);
    throw new SyncError(
      ErrorCodes.EXPORT_EMPTY,
      'transient',
      'audit-log export: the body is empty (not even a header row): not an export',
      {
        status,
      },
    );
  }
}

/** Opens the export stream. Transient failures before the body were already retried by the client. */
export async function openAuditExport(client: PlatformClient, req: AuditExportRequest): Promise<AuditExportResponse> {
  const query = buildExportQuery(req);
  let res: StreamResponse;
  try {
    res = await client.stream('GET', AUDIT_EXPORT_PATH, {
      route: AUDIT_EXPORT_ROUTE,
      query,
      headers: { accept: 'text/csv, */*;q=0.5' },
      what: `audit-log export ${query['start']}..${query['end']}`,
      ...(req.signal ? { signal: req.signal } : {}),
    });
  } catch (e) {
    throw classify(e);
  }
  await checkResponse(res.status, res.headers, res.body);
  const rawType = res.headers['content-type'];
  return { body: res.body, contentType: (Array.isArray(rawType) ? rawType[0] : rawType) ?? '', query };
}
