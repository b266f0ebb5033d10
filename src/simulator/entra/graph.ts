/**
 * Microsoft Graph v1.0 for directory reads, as the source uses it: `/users`, `/groups`,
 * `/groups/{id}`, `/groups/{id}/members`, `/groups/{id}/transitiveMembers`, `/users/delta`
 * and `/groups/delta`. `$select`, `$top` (Graph's page limits), `$filter` (a documented
 * subset; advanced queries need `ConsistencyLevel: eventual`), `@odata.nextLink` paging with
 * an opaque `$skiptoken`, delta links, application permissions from the token's `roles`,
 * and Graph's error bodies.
 */
import { randomUUID } from 'node:crypto';
import type { EntraDirectory, EntraGroup, EntraMember, EntraUser } from './directory.ts';
import type { EntraRoute, JsonReply } from './types.ts';

/** Graph's page sizes: default 100, `$top` up to 999 (directory objects). */
export const PAGE_LIMITS = { default: 100, max: 999 } as const;

export function graphError(status: number, code: string, message: string, headers?: Record<string, string>): JsonReply {
  const date = new Date().toISOString().slice(0, 19);
  const id = randomUUID();
  return {
    status,
    json: { error: { code, message, innerError: { date, 'request-id': id, 'client-request-id': id } } },
    ...(headers ? { headers } : {}),
  };
}

export interface ParsedGraphPath {
  route: EntraRoute;
  groupId?: string;
}

export function parseGraphPath(pathname: string): ParsedGraphPath | undefined {
  const p = pathname.replace(/\/+$/, '');
  if (p === '/v1.0/users') return { route: 'users' };
  if (p === '/v1.0/users/delta' || p === '/v1.0/users/microsoft.graph.delta()') return { route: 'users-delta' };
  if (p === '/v1.0/groups') return { route: 'groups' };
  if (p === '/v1.0/groups/delta' || p === '/v1.0/groups/microsoft.graph.delta()') return { route: 'groups-delta' };
  const m = /^\/v1\.0\/groups\/([^/]+)(?:\/(members|transitiveMembers))?$/.exec(p);
  if (m) {
    const groupId = decodeURIComponent(m[1] as string);
    return { route: m[2] === 'members' ? 'members' : m[2] === 'transitiveMembers' ? 'transitive-members' : 'group', groupId };
  }
  return undefined;
}

const ANY = (...perms: string[]) => perms;
const NEEDS: Partial<Record<EntraRoute, string[]>> = {
  users: ANY('User.Read.All', 'User.ReadWrite.All', 'Directory.Read.All', 'Directory.ReadWrite.All'),
  'users-delta': ANY('User.Read.All', 'User.ReadWrite.All', 'Directory.Read.All', 'Directory.ReadWrite.All'),
  groups: ANY('GroupMember.Read.All', 'Group.Read.All', 'Group.ReadWrite.All', 'Directory.Read.All'),
  group: ANY('GroupMember.Read.All', 'Group.Read.All', 'Group.ReadWrite.All', 'Directory.Read.All'),
  'groups-delta': ANY('GroupMember.Read.All', 'Group.Read.All', 'Group.ReadWrite.All', 'Directory.Read.All'),
  members: ANY('GroupMember.Read.All', 'Group.Read.All', 'Group.ReadWrite.All', 'Directory.Read.All'),
  'transitive-members': ANY('GroupMember.Read.All', 'Group.Read.All', 'Group.ReadWrite.All', 'Directory.Read.All'),
};

const DEFAULT_USER_PROPS = [
  'businessPhones',
  'displayName',
  'givenName',
  'jobTitle',
  'mail',
  'mobilePhone',
  'officeLocation',
  'preferredLanguage',
  'surname',
  'userPrincipalName',
];
const DEFAULT_GROUP_PROPS = ['displayName', 'mail', 'mailEnabled', 'securityEnabled', 'groupTypes', 'description'];

function userProp(u: EntraUser, name: string): unknown {
  if (name.startsWith('extension_')) return u.extensions[name];
  switch (name) {
    case 'businessPhones':
      return [];
    case 'mobilePhone':
    case 'officeLocation':
    case 'preferredLanguage':
      return null;
    default:
      return (u as unknown as Record<string, unknown>)[name] ?? null;
  }
}

function renderUser(u: EntraUser, select: string[] | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const p of select ?? DEFAULT_USER_PROPS) {
    const v = userProp(u, p);
    // Directory extensions and custom security attributes are left out when unset, as Graph does.
    if ((p.startsWith('extension_') || p === 'customSecurityAttributes') && (v === undefined || v === null)) continue;
    out[p] = v === undefined ? null : v;
  }
  out['id'] = u.id;
  return out;
}

function renderGroup(g: EntraGroup, select: string[] | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = { id: g.id };
  for (const p of select ?? DEFAULT_GROUP_PROPS) if (p !== 'id') out[p] = (g as unknown as Record<string, unknown>)[p] ?? null;
  return out;
}

// ---- $filter: equality on simple properties, startswith, groupTypes/any; ne / endswith / not are advanced.
type Clause = (o: Record<string, unknown>) => boolean;
interface ParsedFilter {
  test: Clause;
  advanced: boolean;
}

function literal(raw: string): unknown {
  const t = raw.trim();
  if (t === 'true') return true;
  if (t === 'false') return false;
  if (t === 'null') return null;
  const s = /^'((?:[^']|'')*)'$/.exec(t);
  if (s) return (s[1] as string).replace(/''/g, "'");
  if (/^-?\d+$/.test(t)) return Number(t);
  throw new Error(`bad literal ${t}`);
}

const get = (o: Record<string, unknown>, path: string): unknown =>
  path.split('/').reduce<unknown>((v, k) => (v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined), o);

const eqi = (a: unknown, b: unknown): boolean =>
  typeof a === 'string' && typeof b === 'string' ? a.toLowerCase() === b.toLowerCase() : (a ?? null) === b;

export function parseFilter(expr: string): ParsedFilter {
  const clauses = expr.split(/\s+and\s+/i);
  let advanced = false;
  const tests: Clause[] = clauses.map((c) => {
    const t = c.trim();
    let m = /^(startswith|endswith)\(\s*([\w/]+)\s*,\s*('(?:[^']|'')*')\s*\)$/i.exec(t);
    if (m) {
      const fn = (m[1] as string).toLowerCase();
      if (fn === 'endswith') advanced = true;
      const prop = m[2] as string;
      const v = String(literal(m[3] as string)).toLowerCase();
      return (o) => {
        const x = get(o, prop);
        return typeof x === 'string' && (fn === 'startswith' ? x.toLowerCase().startsWith(v) : x.toLowerCase().endsWith(v));
      };
    }
    m = /^groupTypes\/any\(\s*(\w+)\s*:\s*\1\s+eq\s+('(?:[^']|'')*')\s*\)$/i.exec(t);
    if (m) {
      const v = String(literal(m[2] as string)).toLowerCase();
      return (o) => Array.isArray(o['groupTypes']) && (o['groupTypes'] as string[]).some((x) => x.toLowerCase() === v);
    }
    m = /^not\s+(.*)$/i.exec(t);
    if (m) {
      advanced = true;
      const inner = parseFilter(m[1] as string).test;
      return (o) => !inner(o);
    }
    m = /^([\w/]+)\s+(eq|ne)\s+(.+)$/i.exec(t);
    if (m) {
      const prop = m[1] as string;
      const v = literal(m[3] as string);
      const ne = (m[2] as string).toLowerCase() === 'ne';
      if (ne) advanced = true;
      return (o) => eqi(get(o, prop), v) !== ne;
    }
    throw new Error(`unsupported clause ${t}`);
  });
  return { test: (o) => tests.every((f) => f(o)), advanced };
}

// ---- paging
interface Cursor {
  o: number;
  /** Delta rounds: changes after `since`, up to `upto`. */
  since?: number;
  upto?: number;
  /** Delta tokens: the generation they were issued in. */
  e?: number;
}

const encode = (c: Cursor): string => Buffer.from(JSON.stringify(c)).toString('base64url');
function decode(token: string): Cursor | undefined {
  try {
    const v = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as Cursor;
    return typeof v.o === 'number' ? v : undefined;
  } catch {
    return undefined;
  }
}

export interface GraphEnv {
  directory: EntraDirectory;
  /** Absolute base (scheme://host:port) for nextLink / deltaLink. */
  baseUrl: string;
  roles: readonly string[];
  consistencyLevel: string | undefined;
  /** `Prefer: odata.maxpagesize=N` (delta queries). */
  maxPageSize: number | undefined;
  /** Delta tokens of an earlier generation are expired (410). */
  deltaEpoch: number;
}

export interface GraphResult {
  reply: JsonReply;
  page?: number;
}

function pageLink(base: string, path: string, q: URLSearchParams, key: '$skiptoken' | '$deltatoken', token: string): string {
  const next = new URLSearchParams();
  for (const [k, v] of q) if (k !== '$skiptoken' && k !== '$deltatoken') next.append(k, v);
  next.set(key, token);
  return `${base}${path}?${next.toString().replace(/%24/g, '$').replace(/%2C/g, ',')}`;
}

function topOf(q: URLSearchParams, fallback: number): number | JsonReply {
  const raw = q.get('$top');
  if (raw === null) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > PAGE_LIMITS.max)
    return graphError(
      400,
      'Request_BadRequest',
      `Invalid page size specified: '${raw}'. Must be between 1 and ${PAGE_LIMITS.max} inclusive.`,
    );
  return n;
}

function listPage<T>(
  items: T[],
  q: URLSearchParams,
  env: GraphEnv,
  path: string,
  render: (x: T) => Record<string, unknown>,
  top: number,
): GraphResult {
  const skip = q.get('$skiptoken');
  const cursor = skip === null ? { o: 0 } : decode(skip);
  if (!cursor)
    return {
      reply: graphError(
        400,
        'Directory_ExpiredPageToken',
        'The specified page token value has expired and can no longer be included in your request.',
      ),
    };
  const slice = items.slice(cursor.o, cursor.o + top);
  const json: Record<string, unknown> = {
    '@odata.context': `${env.baseUrl}/v1.0/$metadata#${path.split('/').pop()}`,
    value: slice.map(render),
  };
  if (q.get('$count') === 'true') json['@odata.count'] = items.length;
  if (cursor.o + top < items.length) json['@odata.nextLink'] = pageLink(env.baseUrl, path, q, '$skiptoken', encode({ o: cursor.o + top }));
  return { reply: { status: 200, json }, page: Math.floor(cursor.o / top) + 1 };
}

function select(q: URLSearchParams): string[] | undefined {
  const s = q.get('$select');
  return s === null
    ? undefined
    : s
        .split(',')
        .map((x) => x.trim())
        .filter((x) => x !== '');
}

function filtered<T>(items: T[], q: URLSearchParams, env: GraphEnv, view: (x: T) => Record<string, unknown>): T[] | JsonReply {
  const expr = q.get('$filter');
  const advancedQuery = q.get('$count') === 'true' || q.get('$search') !== null;
  if (advancedQuery && env.consistencyLevel?.toLowerCase() !== 'eventual')
    return graphError(400, 'Request_BadRequest', '$count is not currently supported.');
  if (expr === null) return items;
  let f: ParsedFilter;
  try {
    f = parseFilter(expr);
  } catch {
    return graphError(400, 'Request_UnsupportedQuery', 'Unsupported or invalid query filter clause specified for property.');
  }
  if (f.advanced && (env.consistencyLevel?.toLowerCase() !== 'eventual' || q.get('$count') !== 'true'))
    return graphError(400, 'Request_UnsupportedQuery', 'Unsupported query.');
  return items.filter((x) => f.test(view(x)));
}

function memberView(d: EntraDirectory, m: EntraMember, sel: string[] | undefined): Record<string, unknown> {
  if (m.type === 'user') {
    const u = d.user(m.id);
    return { '@odata.type': '#microsoft.graph.user', ...(u ? renderUser(u, sel ?? ['displayName', 'userPrincipalName']) : { id: m.id }) };
  }
  const g = d.group(m.id);
  return { '@odata.type': '#microsoft.graph.group', ...(g ? renderGroup(g, sel ?? ['displayName']) : { id: m.id }) };
}

/** The permission a request lacks, if any. */
function lacks(route: EntraRoute, q: URLSearchParams, roles: readonly string[]): boolean {
  const need = NEEDS[route];
  if (need && !need.some((p) => roles.includes(p))) return true;
  if ((route === 'users' || route === 'users-delta') && (select(q) ?? []).includes('customSecurityAttributes'))
    return !roles.includes('CustomSecAttributeAssignment.Read.All');
  return false;
}

export function handleGraph(parsed: ParsedGraphPath, path: string, q: URLSearchParams, env: GraphEnv): GraphResult {
  const d = env.directory;
  if (lacks(parsed.route, q, env.roles))
    return { reply: graphError(403, 'Authorization_RequestDenied', 'Insufficient privileges to complete the operation.') };
  const sel = select(q);
  switch (parsed.route) {
    case 'users': {
      const top = topOf(q, PAGE_LIMITS.default);
      if (typeof top !== 'number') return { reply: top };
      const items = filtered(d.listUsers(), q, env, (u) => u as unknown as Record<string, unknown>);
      if (!Array.isArray(items)) return { reply: items };
      return listPage(items, q, env, path, (u) => renderUser(u, sel), top);
    }
    case 'groups': {
      const top = topOf(q, PAGE_LIMITS.default);
      if (typeof top !== 'number') return { reply: top };
      const items = filtered(d.listGroups(), q, env, (g) => g as unknown as Record<string, unknown>);
      if (!Array.isArray(items)) return { reply: items };
      return listPage(items, q, env, path, (g) => renderGroup(g, sel), top);
    }
    case 'group':
    case 'members':
    case 'transitive-members': {
      const g = d.group(parsed.groupId ?? '');
      if (!g)
        return {
          reply: graphError(
            404,
            'Request_ResourceNotFound',
            `Resource '${parsed.groupId ?? ''}' does not exist or one of its queried reference-property objects are not present.`,
          ),
        };
      if (parsed.route === 'group') return { reply: { status: 200, json: renderGroup(g, sel) } };
      const top = topOf(q, PAGE_LIMITS.default);
      if (typeof top !== 'number') return { reply: top };
      const members = parsed.route === 'members' ? g.members : d.transitiveMembers(g.id);
      return listPage(members, q, env, path, (m) => memberView(d, m, sel), top);
    }
    case 'users-delta':
    case 'groups-delta':
      return delta(parsed.route, path, q, env, sel);
    default:
      return { reply: graphError(400, 'BadRequest', `Resource not found for the segment '${path.split('/').pop() ?? ''}'.`) };
  }
}

function delta(
  route: 'users-delta' | 'groups-delta',
  path: string,
  q: URLSearchParams,
  env: GraphEnv,
  sel: string[] | undefined,
): GraphResult {
  const d = env.directory;
  if (q.get('$top') !== null)
    return { reply: graphError(400, 'Request_BadRequest', "The query parameter '$top' is not supported with delta.") };
  let since = 0;
  let upto = d.currentVersion;
  let offset = 0;
  const skip = q.get('$skiptoken');
  const dtoken = q.get('$deltatoken');
  const token = skip ?? dtoken;
  if (token !== null) {
    const c = decode(token);
    if (!c || c.upto === undefined || (c.e ?? 0) < env.deltaEpoch)
      return {
        reply: graphError(
          410,
          'syncStateNotFound',
          'The sync state generation is not found. Delta tokens may be expired; restart the synchronization with a full query.',
        ),
      };
    if (skip !== null) {
      since = c.since ?? 0;
      upto = c.upto;
      offset = c.o;
    } else since = c.upto;
  }
  const size = Math.min(env.maxPageSize ?? PAGE_LIMITS.default, PAGE_LIMITS.max);
  let entries: Array<Record<string, unknown>>;
  if (route === 'users-delta') {
    const ch = d.userChanges(since);
    entries = [...ch.changed.map((u) => renderUser(u, sel)), ...ch.deleted.map((id) => ({ id, '@removed': { reason: 'changed' } }))];
  } else {
    const ch = d.groupChanges(since);
    const wantsMembers = sel === undefined || sel.includes('members');
    entries = [
      ...ch.changed.map(({ group, members }) => {
        const g = renderGroup(
          group,
          sel?.filter((p) => p !== 'members'),
        );
        if (wantsMembers)
          g['members@delta'] = members.map((m) => ({
            '@odata.type': m.type === 'user' ? '#microsoft.graph.user' : '#microsoft.graph.group',
            id: m.id,
            ...(m.removed ? { '@removed': { reason: 'deleted' } } : {}),
          }));
        return g;
      }),
      ...ch.deleted.map((id) => ({ id, '@removed': { reason: 'changed' } })),
    ];
  }
  const slice = entries.slice(offset, offset + size);
  const json: Record<string, unknown> = {
    '@odata.context': `${env.baseUrl}/v1.0/$metadata#${route === 'users-delta' ? 'users' : 'groups'}`,
    value: slice,
  };
  if (offset + size < entries.length)
    json['@odata.nextLink'] = pageLink(env.baseUrl, path, q, '$skiptoken', encode({ o: offset + size, since, upto, e: env.deltaEpoch }));
  else json['@odata.deltaLink'] = pageLink(env.baseUrl, path, q, '$deltatoken', encode({ o: 0, upto, e: env.deltaEpoch }));
  return { reply: { status: 200, json }, page: Math.floor(offset / size) + 1 };
}
