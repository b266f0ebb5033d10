/**
 * The Reports API `activities.list` for the admin application:
 * `GET /admin/reports/v1/activity/users/{userKey}/applications/admin` with `startTime`,
 * `endTime` (RFC 3339), `eventName`, `maxResults` (1–1000, default 1000) and `pageToken`.
 * Activities come newest first; a page token pins the listing to the moment its first page
 * was served, so activities becoming visible meanwhile (data lag) do not shift later pages.
 */
import { apiError, insufficientScopes, notAuthorized, type JsonReply } from './errors.ts';
import type { IssuedToken } from './token.ts';
import type { GoogleWorkspace } from './workspace.ts';
import { bindingOf } from './routes.ts';

export const REPORTS_PREFIX = '/admin/reports/v1/activity/users/';
export const REPORTS_SCOPES = [
  'https://www.googleapis.com/auth/admin.reports.audit.readonly',
  'https://www.googleapis.com/auth/admin.reports.audit',
];
export const ACTIVITY_PAGE = { max: 1000, default: 1000 } as const;

export interface ParsedReports {
  userKey: string;
  application: string;
}

export function parseReportsPath(path: string): ParsedReports | undefined {
  if (!path.startsWith(REPORTS_PREFIX)) return undefined;
  const m = /^([^/]+)\/applications\/([^/]+)\/?$/.exec(path.slice(REPORTS_PREFIX.length));
  return m ? { userKey: decodeURIComponent(m[1] as string), application: decodeURIComponent(m[2] as string) } : undefined;
}

interface ActivityToken {
  o: number;
  h: string;
  /** Listing time of the first page (ms). */
  n: number;
}

function decodeToken(raw: string | null): ActivityToken | undefined {
  if (raw === null || raw === '') return undefined;
  try {
    const v = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as ActivityToken;
    return Number.isInteger(v.o) && typeof v.h === 'string' && Number.isFinite(v.n) ? v : undefined;
  } catch {
    return undefined;
  }
}

function time(query: URLSearchParams, key: 'startTime' | 'endTime'): number | undefined | JsonReply {
  const raw = query.get(key);
  if (raw === null) return undefined;
  const t = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(raw) ? Date.parse(raw) : Number.NaN;
  return Number.isNaN(t) ? apiError(400, `Invalid value '${raw}' for ${key}`, 'invalid') : t;
}

/** Which list page a request asks for (fault matching; counts from 1). */
export function activityPageOf(query: URLSearchParams): number {
  const size = Number(query.get('maxResults') ?? ACTIVITY_PAGE.default);
  const token = decodeToken(query.get('pageToken'));
  return token && Number.isInteger(size) && size > 0 ? Math.floor(token.o / size) + 1 : 1;
}

export function handleReports(parsed: ParsedReports, query: URLSearchParams, token: IssuedToken, ws: GoogleWorkspace): JsonReply {
  if (!REPORTS_SCOPES.some((s) => token.scopes.has(s))) return insufficientScopes();
  const admin = token.subject === undefined ? undefined : ws.user(token.subject);
  if (!admin?.isAdmin || admin.suspended) return notAuthorized();
  if (parsed.application !== 'admin')
    return apiError(400, `Invalid value '${parsed.application}'. Values must match the application names served here: [admin]`, 'invalid');
  const start = time(query, 'startTime');
  const end = time(query, 'endTime');
  if (typeof start === 'object') return start;
  if (typeof end === 'object') return end;
  const raw = query.get('maxResults');
  const size = raw === null ? ACTIVITY_PAGE.default : Number(raw);
  if (!Number.isInteger(size) || size < 1 || size > ACTIVITY_PAGE.max)
    return apiError(400, `Invalid value '${raw}'. Values must be within the range: [1, ${ACTIVITY_PAGE.max}]`, 'invalid');
  const binding = bindingOf(['activities', parsed.userKey, query.get('startTime'), query.get('endTime'), query.get('eventName')]);
  const tokenRaw = query.get('pageToken');
  const pageToken = decodeToken(tokenRaw);
  if (tokenRaw !== null && tokenRaw !== '' && (!pageToken || pageToken.h !== binding))
    return apiError(400, 'Invalid Input: pageToken', 'invalid');
  const asOf = pageToken?.n ?? Date.now();
  const actor = parsed.userKey.toLowerCase();
  const eventName = query.get('eventName');
  const all = ws.activity
    .visible(asOf, start ?? 0, end ?? Number.POSITIVE_INFINITY)
    .filter((a) => actor === 'all' || a.actor.email.toLowerCase() === actor)
    .filter((a) => eventName === null || a.events.some((e) => e.name === eventName));
  const offset = pageToken?.o ?? 0;
  const slice = all.slice(offset, offset + size);
  const body: Record<string, unknown> = { kind: 'admin#reports#activities', etag: `"${bindingOf([binding, String(all.length)])}"` };
  // Google omits an empty list entirely.
  if (slice.length > 0) body['items'] = slice;
  if (offset + slice.length < all.length)
    body['nextPageToken'] = Buffer.from(JSON.stringify({ o: offset + slice.length, h: binding, n: asOf })).toString('base64url');
  return { status: 200, json: body };
}
