/**
 * The Directory API v1 read endpoints: users.list, groups.list, groups.get, members.list,
 * with Google's page-size limits, opaque page tokens bound to the query, projections,
 * partial responses and error bodies. Authentication and faults are applied before this.
 */
import { createHash } from 'node:crypto';
import { apiError, insufficientScopes, notAuthorized, type JsonReply } from './errors.ts';
import { FieldSyntaxError, parseFields, selectFields } from './fields.ts';
import { QuerySyntaxError, groupMatcher, userMatcher } from './query.ts';
import type { IssuedToken } from './token.ts';
import type { GoogleRoute, GoogleUser } from './types.ts';
import type { GoogleWorkspace } from './workspace.ts';

export const DIRECTORY_PREFIX = '/admin/directory/v1';
const SCOPE = 'https://www.googleapis.com/auth/admin.directory.';

type DirectoryRoute = Exclude<GoogleRoute, 'token' | 'activities'>;

/** Google's documented maxResults ranges and defaults. */
export const PAGE_LIMITS = {
  users: { max: 500, default: 100 },
  groups: { max: 200, default: 200 },
  members: { max: 200, default: 200 },
} as const;

/** Any one of these scopes lets a token call the route. */
const ROUTE_SCOPES: Record<DirectoryRoute, string[]> = {
  users: ['user.readonly', 'user'].map((s) => SCOPE + s),
  user: ['user.readonly', 'user'].map((s) => SCOPE + s),
  groups: ['group.readonly', 'group'].map((s) => SCOPE + s),
  group: ['group.readonly', 'group'].map((s) => SCOPE + s),
  members: ['group.member.readonly', 'group.member', 'group.readonly', 'group'].map((s) => SCOPE + s),
};

export interface ParsedRoute {
  route: DirectoryRoute;
  groupKey?: string;
  userKey?: string;
}

export function parseDirectoryPath(path: string): ParsedRoute | undefined {
  if (!path.startsWith(`${DIRECTORY_PREFIX}/`)) return undefined;
  const rest = path.slice(DIRECTORY_PREFIX.length).replace(/\/+$/, '');
  if (rest === '/users') return { route: 'users' };
  if (rest === '/groups') return { route: 'groups' };
  const u = /^\/users\/([^/]+)$/.exec(rest);
  if (u) return { route: 'user', userKey: decodeURIComponent(u[1] as string) };
  const m = /^\/groups\/([^/]+)(\/members)?$/.exec(rest);
  if (m) return { route: m[2] ? 'members' : 'group', groupKey: decodeURIComponent(m[1] as string) };
  return undefined;
}

/** Where a list request starts, for fault matching (`page` counts from 1). */
export function pageOf(route: ParsedRoute['route'], query: URLSearchParams): number {
  if (route === 'group' || route === 'user') return 1;
  const size = Number(query.get('maxResults') ?? PAGE_LIMITS[route].default);
  const token = decodeToken(query.get('pageToken'));
  return token && Number.isInteger(size) && size > 0 ? Math.floor(token.o / size) + 1 : 1;
}

interface PageToken {
  o: number;
  h: string;
}

function decodeToken(raw: string | null): PageToken | undefined {
  if (raw === null || raw === '') return undefined;
  try {
    const v = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as PageToken;
    return Number.isInteger(v.o) && typeof v.h === 'string' ? v : undefined;
  } catch {
    return undefined;
  }
}

export const bindingOf = (parts: Array<string | null>): string =>
  createHash('sha1').update(parts.join('\u0000')).digest('hex').slice(0, 16);

export class ApiReply extends Error {
  readonly reply: JsonReply;
  constructor(reply: JsonReply) {
    super('api error');
    this.reply = reply;
  }
}

export function page<T>(
  items: readonly T[],
  query: URLSearchParams,
  limit: { max: number; default: number },
  binding: string,
): { slice: T[]; next?: string } {
  const raw = query.get('maxResults');
  const size = raw === null ? limit.default : Number(raw);
  if (!Number.isInteger(size) || size < 1 || size > limit.max) {
    throw new ApiReply(
      apiError(400, `Invalid value '${raw}'. Values must be within the range: [1, ${limit.max}]`, 'invalid', {
        location: { location: 'maxResults', locationType: 'parameter' },
      }),
    );
  }
  const tokenRaw = query.get('pageToken');
  const token = decodeToken(tokenRaw);
  if (tokenRaw !== null && tokenRaw !== '' && (!token || token.h !== binding || token.o > items.length)) {
    throw new ApiReply(apiError(400, 'Invalid Input: pageToken', 'invalid'));
  }
  const offset = token?.o ?? 0;
  const slice = items.slice(offset, offset + size);
  const nextOffset = offset + slice.length;
  return nextOffset < items.length
    ? { slice, next: Buffer.from(JSON.stringify({ o: nextOffset, h: binding })).toString('base64url') }
    : { slice };
}

function withFields(body: Record<string, unknown>, query: URLSearchParams): unknown {
  const spec = query.get('fields');
  if (spec === null || spec === '') return body;
  try {
    return selectFields(body, parseFields(spec));
  } catch (e) {
    if (e instanceof FieldSyntaxError)
      throw new ApiReply(apiError(400, e.message, 'invalidParameter', { location: { location: 'fields', locationType: 'parameter' } }));
    throw e;
  }
}

function checkCustomerOrDomain(ws: GoogleWorkspace, query: URLSearchParams, allowUserKey: boolean): void {
  const customer = query.get('customer');
  const domain = query.get('domain');
  if (customer !== null) {
    if (customer !== 'my_customer' && customer !== ws.customerId) throw new ApiReply(apiError(400, 'Bad Request', 'badRequest'));
    return;
  }
  if (domain !== null) {
    if (domain.toLowerCase() !== ws.domain.toLowerCase()) throw new ApiReply(notAuthorized());
    return;
  }
  if (allowUserKey && query.get('userKey') !== null) return;
  throw new ApiReply(apiError(400, 'Bad Request', 'badRequest'));
}

function projectUser(u: GoogleUser, projection: string, mask: Set<string> | undefined): GoogleUser {
  if (u.customSchemas === undefined || projection === 'full') return u;
  const { customSchemas, ...rest } = u;
  if (projection !== 'custom' || !mask) return rest;
  const kept = Object.fromEntries(Object.entries(customSchemas).filter(([k]) => mask.has(k.toLowerCase())));
  return Object.keys(kept).length > 0 ? { ...rest, customSchemas: kept } : rest;
}

export interface DirectoryEnv {
  workspace: GoogleWorkspace;
}

export function handleDirectory(parsed: ParsedRoute, query: URLSearchParams, token: IssuedToken, env: DirectoryEnv): JsonReply {
  const ws = env.workspace;
  if (!ROUTE_SCOPES[parsed.route].some((s) => token.scopes.has(s))) return insufficientScopes();
  // Directory reads need an administrator: no subject (no delegation) or a non-admin subject is refused.
  const admin = token.subject === undefined ? undefined : ws.user(token.subject);
  if (!admin?.isAdmin || admin.suspended) return notAuthorized();
  try {
    switch (parsed.route) {
      case 'users': {
        checkCustomerOrDomain(ws, query, false);
        const projection = query.get('projection') ?? 'basic';
        const maskRaw = query.get('customFieldMask');
        if (projection === 'custom' && !maskRaw)
          return apiError(400, 'Bad Request: customFieldMask is required with projection=custom', 'badRequest');
        let match: (u: GoogleUser) => boolean;
        try {
          match = userMatcher(query.get('query'));
        } catch (e) {
          if (e instanceof QuerySyntaxError) return apiError(400, 'Invalid Input', 'invalid');
          throw e;
        }
        // showDeleted=true lists the deleted users instead (Google: deleted within the last 20 days).
        const all = (query.get('showDeleted') === 'true' ? ws.listDeletedUsers() : ws.listUsers()).filter(match);
        const mask = maskRaw ? new Set(maskRaw.split(',').map((s) => s.trim().toLowerCase())) : undefined;
        const p = page(
          all,
          query,
          PAGE_LIMITS.users,
          bindingOf(['users', query.get('query'), query.get('customer'), query.get('domain'), query.get('showDeleted')]),
        );
        const body: Record<string, unknown> = { kind: 'admin#directory#users', etag: `"${bindingOf([String(all.length)])}"` };
        // Google omits an empty list entirely.
        if (p.slice.length > 0) body['users'] = p.slice.map((u) => projectUser(u, projection, mask));
        if (p.next) body['nextPageToken'] = p.next;
        return { status: 200, json: withFields(body, query) };
      }
      case 'groups': {
        checkCustomerOrDomain(ws, query, true);
        let match: ReturnType<typeof groupMatcher>;
        try {
          match = groupMatcher(query.get('query'));
        } catch (e) {
          if (e instanceof QuerySyntaxError) return apiError(400, 'Invalid Input', 'invalid');
          throw e;
        }
        const userKey = query.get('userKey');
        // userKey: the groups that user (or group) is a direct member of.
        const all = (userKey !== null ? ws.groupsOf(userKey) : ws.listGroups()).filter(match);
        const p = page(
          all,
          query,
          PAGE_LIMITS.groups,
          bindingOf(['groups', query.get('query'), query.get('customer'), query.get('domain'), query.get('userKey')]),
        );
        const body: Record<string, unknown> = { kind: 'admin#directory#groups', etag: `"${bindingOf([String(all.length)])}"` };
        if (p.slice.length > 0) body['groups'] = p.slice;
        if (p.next) body['nextPageToken'] = p.next;
        return { status: 200, json: withFields(body, query) };
      }
      case 'user': {
        // users.get: by primary address, alias or id; a deleted user is 404 like one never created.
        const u = ws.user(parsed.userKey ?? '');
        if (!u) return apiError(404, 'Resource Not Found: userKey', 'notFound');
        return { status: 200, json: withFields({ ...projectUser(u, query.get('projection') ?? 'basic', undefined) }, query) };
      }
      case 'group':
      case 'members': {
        const g = ws.group(parsed.groupKey ?? '');
        if (!g) return apiError(404, 'Resource Not Found: groupKey', 'notFound');
        if (parsed.route === 'group') return { status: 200, json: withFields({ ...g }, query) };
        const roles = query
          .get('roles')
          ?.split(',')
          .map((r) => r.trim().toUpperCase());
        const all = ws.listMembers(g).filter((m) => !roles || roles.includes(m.role));
        const p = page(all, query, PAGE_LIMITS.members, bindingOf(['members', g.id, query.get('roles')]));
        const body: Record<string, unknown> = { kind: 'admin#directory#members', etag: `"${bindingOf([g.id, String(all.length)])}"` };
        if (p.slice.length > 0) body['members'] = p.slice;
        if (p.next) body['nextPageToken'] = p.next;
        return { status: 200, json: withFields(body, query) };
      }
    }
  } catch (e) {
    if (e instanceof ApiReply) return e.reply;
    throw e;
  }
}
