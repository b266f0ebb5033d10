/**
 * startOktaSimulator(): an Okta org on a real socket — the Management API endpoints a
 * directory read uses (GET /api/v1/users, /api/v1/groups, /api/v1/groups/{id}/users,
 * /api/v1/groups/rules) with SSWS API tokens or OAuth access tokens from the org
 * authorization server (POST /oauth2/v1/token, private-key JWT), `after` cursors in
 * `Link` headers, the documented page sizes, search/filter semantics, per-endpoint rate
 * limits and Okta's error bodies. @okta/okta-sdk-nodejs talks to it with `orgUrl` set to
 * the simulator's URL.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import { listenOn } from '../http-io.ts';
import { OktaOrg, type SimOktaGroup, type SimOktaUser } from './org.ts';
import { RateLimiter, type OktaBucket } from './rate-limit.ts';
import { SearchSyntaxError, matches, parseSearch } from './search.ts';
import { handleToken, type IssuedToken, type SimServiceApp } from './token.ts';

export interface OktaFaultRule {
  /**
   * `foreign-link`: the page is served with its next link on another origin; `repeat-link`:
   * with a next link to itself (a server that pages in a loop); `expire-tokens`: every issued
   * access token expires just before the request is authenticated (matched by route and count).
   */
  kind: 'server-error' | 'rate-limit' | 'truncated' | 'reset' | 'foreign-link' | 'repeat-link' | 'expire-tokens';
  route: OktaBucket;
  /** 1-based page of a listing (from the `after` cursor's position); any page when absent. */
  page?: number;
  /** How many matching requests fail; every one when absent. */
  times?: number;
}

export interface OktaRequestLogEntry {
  method: string;
  path: string;
  query: Record<string, string>;
  route: OktaBucket | 'other';
  status: number;
  page?: number;
  fault?: OktaFaultRule['kind'];
  /** X-Rate-Limit-Remaining sent with the response. */
  remaining?: number;
}

export interface SimApiToken {
  token: string;
  /** The admin role of the user who created the token; none: every API call is 403. */
  adminRole?: string | undefined;
}

export interface OktaSimulatorOptions {
  /** Serve HTTPS with this key and certificate (PEM), as Okta does. */
  tls?: { key: string; cert: string };
  host?: string;
  port?: number;
  apiTokens?: SimApiToken[];
  serviceApps?: SimServiceApp[];
  /** Requests per window by bucket (defaults: Okta's per-minute limits). */
  rateLimits?: Partial<Record<OktaBucket, number>>;
  rateLimitWindowSeconds?: number;
  recordRequests?: boolean;
}

export interface OktaSimulator {
  /** The org URL: http://127.0.0.1:<port> */
  url: string;
  org: OktaOrg;
  requests: OktaRequestLogEntry[];
  rateLimiter: RateLimiter;
  setFaults(rules: OktaFaultRule[]): void;
  setApiTokens(tokens: SimApiToken[]): void;
  setServiceApps(apps: SimServiceApp[]): void;
  /** Forget issued access tokens (as if they expired). */
  revokeTokens(): void;
  close(): Promise<void>;
}

/** Roles that may list users and groups. */
const READ_ROLES = new Set(['SUPER_ADMIN', 'ORG_ADMIN', 'READ_ONLY_ADMIN', 'APP_ADMIN', 'HELP_DESK_ADMIN']);
const SCOPE_OF: Partial<Record<OktaBucket, string>> = {
  users: 'okta.users.read',
  user: 'okta.users.read',
  groups: 'okta.groups.read',
  'group-users': 'okta.groups.read',
  rules: 'okta.groups.read',
};
const PAGE: Record<string, { def: number; max: number }> = {
  users: { def: 200, max: 200 },
  groups: { def: 10000, max: 10000 },
  'group-users': { def: 1000, max: 1000 },
  rules: { def: 50, max: 200 },
};
const MAX_FORM_BYTES = 64 * 1024;

export function oktaError(
  status: number,
  errorCode: string,
  errorSummary: string,
  causes: string[] = [],
): { status: number; json: unknown } {
  return {
    status,
    json: {
      errorCode,
      errorSummary,
      errorLink: errorCode,
      errorId: `oae${randomBytes(11).toString('base64url')}`,
      errorCauses: causes.map((c) => ({ errorSummary: c })),
    },
  };
}

function readForm(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let size = 0;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= MAX_FORM_BYTES) chunks.push(c);
    });
    req.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.once('error', reject);
  });
}

function routeOf(method: string, path: string): { route: OktaBucket | 'other'; id?: string } {
  if (method === 'POST' && path === '/oauth2/v1/token') return { route: 'token' };
  if (method !== 'GET') return { route: 'other' };
  if (path === '/api/v1/users') return { route: 'users' };
  if (path === '/api/v1/groups') return { route: 'groups' };
  if (path === '/api/v1/groups/rules') return { route: 'rules' };
  let m = /^\/api\/v1\/groups\/([^/]+)\/users$/.exec(path);
  if (m) return { route: 'group-users', id: decodeURIComponent(m[1] as string) };
  m = /^\/api\/v1\/users\/([^/]+)$/.exec(path);
  if (m) return { route: 'user', id: decodeURIComponent(m[1] as string) };
  return { route: 'other' };
}

const render = {
  user: (u: SimOktaUser, base: string) => ({ ...u, _links: { self: { href: `${base}/api/v1/users/${u.id}` } } }),
  group: (g: SimOktaGroup, base: string) => ({
    ...g,
    _links: {
      logo: [],
      users: { href: `${base}/api/v1/groups/${g.id}/users` },
      apps: { href: `${base}/api/v1/groups/${g.id}/apps` },
    },
  }),
};

export async function startOktaSimulator(opts: OktaSimulatorOptions = {}): Promise<OktaSimulator> {
  const org = new OktaOrg();
  let tokens = new Map((opts.apiTokens ?? []).map((t) => [t.token, t] as const));
  let apps = new Map((opts.serviceApps ?? []).map((a) => [a.clientId, a] as const));
  const issued = new Map<string, IssuedToken>();
  const limiter = new RateLimiter(opts.rateLimits, opts.rateLimitWindowSeconds);
  let faults: Array<OktaFaultRule & { used: number }> = [];
  const requests: OktaRequestLogEntry[] = [];
  const record = opts.recordRequests ?? true;
  let base = '';
  // Sorted, filtered listings by query: Okta pages a stable order (by id); re-filtering a
  // 100,000-user org for every page would make the simulator the bottleneck.
  const cache = new Map<string, { version: number; items: Array<SimOktaUser | SimOktaGroup> }>();

  const listing = <T extends SimOktaUser | SimOktaGroup>(key: string, all: () => T[], pred: (x: T) => boolean): T[] => {
    const hit = cache.get(key);
    const v = org.version();
    if (hit && hit.version === v) return hit.items as T[];
    const items = all()
      .filter(pred)
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    if (cache.size > 64) cache.clear();
    cache.set(key, { version: v, items });
    return items;
  };

  const page = <T extends { id: string }>(
    items: T[],
    url: URL,
    kind: string,
  ): { slice: T[]; page: number; next: string | undefined; error?: { status: number; json: unknown } } => {
    const spec = PAGE[kind] as { def: number; max: number };
    const rawLimit = url.searchParams.get('limit');
    const limit = rawLimit === null ? spec.def : Math.min(spec.max, Math.max(1, Number.parseInt(rawLimit, 10) || spec.def));
    const after = url.searchParams.get('after');
    let start = 0;
    if (after !== null) {
      // First id after the cursor (binary search over the id order).
      let lo = 0;
      let hi = items.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if ((items[mid] as T).id <= after) lo = mid + 1;
        else hi = mid;
      }
      start = lo;
    }
    const slice = items.slice(start, start + limit);
    const more = start + limit < items.length;
    let next: string | undefined;
    if (more) {
      const q = new URLSearchParams(url.searchParams);
      q.set('limit', String(limit));
      q.set('after', (slice[slice.length - 1] as T).id);
      next = `${base}${url.pathname}?${q.toString()}`;
    }
    return { slice, page: Math.floor(start / limit) + 1, next };
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', base);
    const method = (req.method ?? 'GET').toUpperCase();
    const { route, id } = routeOf(method, url.pathname);
    const entry: OktaRequestLogEntry = { method, path: url.pathname, query: Object.fromEntries(url.searchParams), route, status: 0 };
    const headers: Record<string, string> = {};
    const send = (reply: { status: number; json: unknown }, extra: Record<string, string> = {}, truncate = false): void => {
      let body = JSON.stringify(reply.json);
      if (truncate) body = body.slice(0, Math.floor(body.length / 2));
      entry.status = reply.status;
      res.writeHead(reply.status, {
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
        'x-okta-request-id': randomBytes(12).toString('base64url'),
        ...headers,
        ...extra,
      });
      res.end(body);
    };
    if (record) requests.push(entry);
    if (route === 'other') return send(oktaError(404, 'E0000022', 'The endpoint does not support the provided HTTP method'));

    const rl = limiter.take(route);
    Object.assign(headers, rl.headers);
    entry.remaining = Number(rl.headers['x-rate-limit-remaining']);
    if (!rl.allowed) return send(oktaError(429, 'E0000047', 'API call exceeded rate limit due to too many requests.'));

    if (route === 'token') {
      const form = new URLSearchParams(await readForm(req));
      const r = handleToken(form, `${base}/oauth2/v1/token`, apps, issued);
      const f = takeFault(route, undefined);
      if (f) return fault(f);
      return send(r, { 'cache-control': 'no-cache, no-store', pragma: 'no-cache' });
    }

    const expire = faults.find((r) => r.kind === 'expire-tokens' && r.route === route && (r.times === undefined || r.used < r.times));
    if (expire) {
      expire.used++;
      entry.fault = 'expire-tokens';
      issued.clear();
    }
    // Authentication, then authorization: scope (OAuth) and admin role.
    const auth = req.headers.authorization ?? '';
    let role: string | undefined;
    let scopes: string[] | undefined;
    const ssws = /^SSWS (.+)$/.exec(auth);
    const bearer = /^Bearer (.+)$/.exec(auth);
    if (ssws) {
      const t = tokens.get(ssws[1] as string);
      if (!t) return send(oktaError(401, 'E0000011', 'Invalid token provided'));
      role = t.adminRole;
    } else if (bearer) {
      const t = issued.get(bearer[1] as string);
      if (!t || t.expiresAt <= Date.now())
        return send(oktaError(401, 'E0000011', 'Invalid token provided'), {
          'www-authenticate': 'Bearer realm="IdpMyAccountAPI", error="invalid_token", error_description="The token has expired."',
        });
      role = t.adminRole;
      scopes = t.scopes;
    } else {
      return send(oktaError(401, 'E0000005', 'Invalid session'));
    }
    const needed = SCOPE_OF[route];
    if (scopes && needed && !scopes.includes(needed))
      return send(oktaError(403, 'E0000006', 'You do not have permission to perform the requested action'), {
        'www-authenticate': `Bearer realm="IdpMyAccountAPI", scope="${needed}", error="insufficient_scope", error_description="The access token provided does not contain the required scopes."`,
      });
    if (role === undefined || !READ_ROLES.has(role))
      return send(oktaError(403, 'E0000006', 'You do not have permission to perform the requested action'));

    const search = url.searchParams.get('search');
    const filter = url.searchParams.get('filter');
    let pred: (x: unknown) => boolean = () => true;
    try {
      const expr = search ?? filter;
      if (expr !== null) {
        const n = parseSearch(expr);
        pred = (x) => matches(n, x);
      }
    } catch (e) {
      if (e instanceof SearchSyntaxError) return send(oktaError(400, 'E0000031', 'Invalid search criteria.', [`search: ${e.message}`]));
      throw e;
    }
    const key = `${route}|${id ?? ''}|${search ?? ''}|${filter ?? ''}`;
    let items: Array<{ id: string }>;
    let renderOne: (x: never) => unknown;
    if (route === 'users') {
      // Without search, Okta leaves DEPROVISIONED users out; a search returns every status.
      const p = search === null ? (u: SimOktaUser) => u.status !== 'DEPROVISIONED' && pred(u) : pred;
      // A change not yet in the search index is not matched by a lastUpdated range.
      const byTime = search?.includes('lastUpdated') === true;
      items = byTime
        ? listing(
            `${key}|unindexed:${org.unindexed()}`,
            () => org.listUsers(),
            (u: SimOktaUser) => org.indexed(u.id) && p(u),
          )
        : listing(key, () => org.listUsers(), p);
      renderOne = ((u: SimOktaUser) => render.user(u, base)) as (x: never) => unknown;
    } else if (route === 'user') {
      let u: SimOktaUser;
      try {
        u = org.user(id as string);
      } catch {
        return send(oktaError(404, 'E0000007', `Not found: Resource not found: ${id} (User)`));
      }
      return send({ status: 200, json: render.user(u, base) });
    } else if (route === 'groups') {
      items = listing(key, () => org.listGroups(), pred);
      renderOne = ((g: SimOktaGroup) => render.group(g, base)) as (x: never) => unknown;
    } else if (route === 'group-users') {
      if (!org.listGroups().some((g) => g.id === id))
        return send(oktaError(404, 'E0000007', `Not found: Resource not found: ${id} (UserGroup)`));
      items = org.members(id as string).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      renderOne = ((u: SimOktaUser) => render.user(u, base)) as (x: never) => unknown;
    } else {
      items = org.listRules().map((r) => ({
        id: r.id,
        type: 'group_rule',
        name: r.name,
        status: r.status,
        conditions: { expression: { value: `user.${r.attribute}=="${r.value}"`, type: 'urn:okta:expression:1.0' } },
        actions: { assignUserToGroups: { groupIds: r.groupIds } },
      }));
      renderOne = ((r: unknown) => r) as (x: never) => unknown;
    }
    const p = page(items, url, route);
    entry.page = p.page;
    const f = takeFault(route, p.page);
    const self = `<${base}${url.pathname}${url.search}>; rel="self"`;
    let next = p.next;
    if (f?.kind === 'foreign-link' || f?.kind === 'repeat-link') {
      entry.fault = f.kind;
      next = f.kind === 'repeat-link' ? `${base}${url.pathname}${url.search}` : `http://okta-sim.invalid${url.pathname}${url.search}`;
    } else if (f) return fault(f);
    send({ status: 200, json: p.slice.map((x) => renderOne(x as never)) }, { link: next ? `${self}, <${next}>; rel="next"` : self });

    function fault(f: OktaFaultRule): void {
      entry.fault = f.kind;
      if (f.kind === 'reset') {
        entry.status = -1;
        req.socket.destroy();
        return;
      }
      if (f.kind === 'truncated') send({ status: 200, json: Array.from({ length: 20 }, (_, i) => ({ id: `00u${i}` })) }, {}, true);
      else if (f.kind === 'rate-limit') {
        headers['x-rate-limit-remaining'] = '0';
        send(oktaError(429, 'E0000047', 'API call exceeded rate limit due to too many requests.'));
      } else send(oktaError(500, 'E0000009', 'Internal Server Error'));
    }
  };

  const takeFault = (route: OktaBucket, pageNo: number | undefined): OktaFaultRule | undefined => {
    const f = faults.find(
      (r) =>
        r.kind !== 'expire-tokens' &&
        r.route === route &&
        (r.page === undefined || r.page === pageNo) &&
        (r.times === undefined || r.used < r.times),
    );
    if (f) f.used++;
    return f;
  };

  const listener = (req: IncomingMessage, res: ServerResponse): void => {
    req.on('error', () => undefined);
    res.on('error', () => undefined);
    handle(req, res).catch(() => {
      if (!res.headersSent) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify(oktaError(500, 'E0000009', 'Internal Server Error').json));
      } else res.destroy();
    });
  };
  const server: Server = opts.tls ? createTlsServer({ key: opts.tls.key, cert: opts.tls.cert }, listener) : createServer(listener);
  server.on('tlsClientError', () => undefined);
  base = await listenOn(server, { port: opts.port, host: opts.host }, opts.tls ? 'https' : 'http');
  return {
    url: base,
    org,
    requests,
    rateLimiter: limiter,
    setFaults: (rules) => {
      faults = rules.map((r) => ({ ...r, used: 0 }));
    },
    setApiTokens: (t) => {
      tokens = new Map(t.map((x) => [x.token, x] as const));
    },
    setServiceApps: (a) => {
      apps = new Map(a.map((x) => [x.clientId, x] as const));
    },
    revokeTokens: () => issued.clear(),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
