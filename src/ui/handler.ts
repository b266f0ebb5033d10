/**
 * The status page's routes (on its own server, src/ui/server.ts):
 *   GET  /ui/assets/app.css | app.js | uplot.js | uplot.css   assets, no data, no sign-in needed
 *   GET  /ui/login, POST /ui/login, POST /ui/logout            the read-token session (auth.ts)
 *   GET  /ui                                   every tenant at a glance
 *   GET  /ui/tenants/<id>?user=&result=&action= one tenant: schedule, runs, charts, guard, quarantine, audit, sinks, log
 *   POST /ui/tenants/<id>/actions/<action>     approve-deletes | resume | trigger (token form, see actions.ts)
 * Order of the checks: the Host header (host-check.ts), then the assets, then who is asking;
 * anonymous requests get the login page (401) and nothing else. Failed credentials of any kind
 * (login, bearer, action token) are rate-limited (failed-credentials.ts).
 * Responses carry a strict Content-Security-Policy (own scripts and styles only, forms to self,
 * no framing) and are never cached.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../observability/logger.ts';
import type { RecordResult } from '../provisioning-log/record.ts';
import { isAction, originRefusal, readForm } from './actions.ts';
import { CSS, JS, uplotAsset } from './assets.ts';
import type { UiAuth, Viewer } from './auth.ts';
import type { FailedCredentials } from './failed-credentials.ts';
import { loginPage, nextPath } from './login-page.ts';
import { messagePage, overviewPage, type SignedIn, tenantPage, tenantPath } from './page.ts';
import { redactTenantView } from './redact.ts';
import type { LogFilter, UiBackend } from './view.ts';

export type UiHandler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

export interface UiHandlerOptions {
  backend: UiBackend;
  auth: UiAuth;
  failures: FailedCredentials;
  /** The Host header allowlist (host-check.ts). */
  hostAllowed: (host: string | undefined) => boolean;
  logger?: Logger;
  /** daemon.ui.traceUrl. */
  traceUrl?: string;
}

const HTML = 'text/html; charset=utf-8';
const TEXT = 'text/plain; charset=utf-8';
const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  // Not no-referrer: with it, browsers send `Origin: null` on form posts and the origin check could not tell this page from another.
  'referrer-policy': 'same-origin',
  'cache-control': 'no-store',
};
const CHALLENGE = { 'www-authenticate': 'Bearer realm="scim-audit-sync status page"' };

const NOTICES: Record<string, string> = {
  'approve-deletes': 'Held deletions approved: the reconcile that runs them has been started.',
  resume: 'Tenant resumed: quarantine ended and a reconcile has been started.',
  trigger: 'Reconcile started.',
};

function send(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  type: string,
  body: string,
  extra: Record<string, string> = {},
): void {
  const buf = Buffer.from(body, 'utf8');
  res.writeHead(status, { 'content-type': type, 'content-length': String(buf.length), ...SECURITY_HEADERS, ...extra });
  res.end(req.method === 'HEAD' ? undefined : buf);
}

function filterOf(params: URLSearchParams, redacted: boolean): LogFilter {
  // The redacted view has no search by person: a hit would tell who is in the log.
  const user = redacted ? undefined : params.get('user')?.trim();
  const result = params.get('result');
  const action = params.get('action')?.trim();
  return {
    ...(user ? { user: user.slice(0, 200) } : {}),
    ...(result === 'ok' || result === 'failed' || result === 'held' ? { result: result as RecordResult } : {}),
    ...(action ? { action: action.slice(0, 50) } : {}),
  };
}

const signedIn = (v: Viewer): SignedIn => ({ name: v.name, via: v.via, redacted: v.role === 'redacted' });

export function createUiHandler(opts: UiHandlerOptions): UiHandler {
  const { backend, auth, failures } = opts;
  const methodNotAllowed = (req: IncomingMessage, res: ServerResponse, allow: string): void =>
    send(req, res, 405, TEXT, 'method not allowed\n', { allow });
  const tooMany = (req: IncomingMessage, res: ServerResponse, ms: number): void =>
    send(req, res, 429, TEXT, 'too many failed sign-in or token attempts; try again later\n', {
      'retry-after': String(Math.max(1, Math.ceil(ms / 1000))),
    });
  const failed = async (req: IncomingMessage, what: string): Promise<void> => {
    const peer = auth.peer(req);
    await failures.failed(peer);
    opts.logger?.warn({ peer, credential: what }, 'status page: wrong credential');
  };

  return async (req, res) => {
    if (!opts.hostAllowed(req.headers.host))
      return send(req, res, 421, TEXT, 'this status page does not answer to that host name (daemon.ui.allowedHosts)\n');
    const url = new URL(req.url ?? '/', 'http://ui.invalid');
    const path = url.pathname.replace(/(.)\/+$/, '$1');
    const get = req.method === 'GET' || req.method === 'HEAD';

    // Browsers ask for it on every page; there is none, and a 404 would be noise in their console.
    if (path === '/favicon.ico') return send(req, res, 204, TEXT, '', { 'cache-control': 'max-age=86400' });
    if (path.startsWith('/ui/assets/')) {
      if (!get) return methodNotAllowed(req, res, 'GET, HEAD');
      const name = path.slice('/ui/assets/'.length);
      if (name === 'app.css' || name === 'app.js')
        return send(
          req,
          res,
          200,
          name === 'app.css' ? 'text/css; charset=utf-8' : 'text/javascript; charset=utf-8',
          name === 'app.css' ? CSS : JS,
          {
            'cache-control': 'max-age=300',
          },
        );
      if (name === 'uplot.js' || name === 'uplot.css') {
        const body = await uplotAsset(name);
        if (body === undefined) return send(req, res, 404, TEXT, 'not found\n');
        return send(req, res, 200, name === 'uplot.css' ? 'text/css; charset=utf-8' : 'text/javascript; charset=utf-8', body, {
          'cache-control': 'max-age=3600',
        });
      }
      return send(req, res, 404, TEXT, 'not found\n');
    }

    const login = (status: number, next: string, error?: string, extra: Record<string, string> = {}): void =>
      send(req, res, status, HTML, loginPage({ ...auth.methods, next, ...(error ? { error } : {}) }), { ...CHALLENGE, ...extra });

    if (path === '/ui/login') {
      if (get) return login(200, nextPath(url.searchParams.get('next')));
      if (req.method !== 'POST') return methodNotAllowed(req, res, 'GET, HEAD, POST');
      const origin = originRefusal(req);
      if (origin) return send(req, res, origin.status, TEXT, `${origin.reason}\n`);
      const blocked = await failures.blockedForMs(auth.peer(req));
      if (blocked > 0) return tooMany(req, res, blocked);
      const form = await readForm(req);
      if (!(form instanceof URLSearchParams)) return send(req, res, form.status, TEXT, `${form.reason}\n`);
      const next = nextPath(form.get('next'));
      const role = auth.methods.token ? auth.tokenRole(form.get('token') ?? '') : undefined;
      if (role === undefined) {
        await failed(req, 'read token');
        return login(401, next, 'The read token is wrong.');
      }
      await failures.succeeded(auth.peer(req));
      opts.logger?.info({ peer: auth.peer(req), role }, 'status page: signed in with a read token');
      return send(req, res, 303, TEXT, 'signed in\n', { location: next, 'set-cookie': auth.newSession(req, role) });
    }
    if (path === '/ui/logout') {
      if (req.method !== 'POST') return methodNotAllowed(req, res, 'POST');
      const origin = originRefusal(req);
      if (origin) return send(req, res, origin.status, TEXT, `${origin.reason}\n`);
      return send(req, res, 303, TEXT, 'signed out\n', { location: '/ui/login', 'set-cookie': auth.endSession(req) });
    }

    if (req.headers.authorization !== undefined) {
      const blocked = await failures.blockedForMs(auth.peer(req));
      if (blocked > 0) return tooMany(req, res, blocked);
    }
    const who = auth.identify(req);
    if (who.badBearer) await failed(req, 'bearer token');
    const viewer = who.viewer;
    if (viewer === undefined) return login(401, get ? nextPath(`${path}${url.search}`) : '/ui');
    const me = signedIn(viewer);

    const tenants = backend.tenantIds();
    const notFound = (): void => send(req, res, 404, HTML, messagePage('Not found', 'There is no such page.', '/ui', tenants, me));
    if (path === '/ui') {
      if (!get) return methodNotAllowed(req, res, 'GET, HEAD');
      return send(req, res, 200, HTML, overviewPage(await backend.summaries(), me));
    }
    const m = /^\/ui\/tenants\/([^/]+)(?:\/actions\/([a-z-]+))?$/.exec(path);
    if (!m) return notFound();
    let tenant: string;
    try {
      tenant = decodeURIComponent(m[1]!);
    } catch {
      return notFound();
    }
    if (!tenants.includes(tenant)) return notFound();
    const action = m[2];

    if (action === undefined) {
      if (!get) return methodNotAllowed(req, res, 'GET, HEAD');
      const filter = filterOf(url.searchParams, me.redacted);
      const done = url.searchParams.get('done');
      const view = await backend.tenant(tenant, filter);
      return send(
        req,
        res,
        200,
        HTML,
        tenantPage(me.redacted ? redactTenantView(view) : view, {
          filter,
          actionsEnabled: backend.actions !== undefined,
          tenants,
          who: me,
          ...(opts.traceUrl !== undefined ? { traceUrl: opts.traceUrl } : {}),
          ...(done && NOTICES[done] ? { notice: { text: NOTICES[done], error: false } } : {}),
        }),
      );
    }

    if (!isAction(action)) return notFound();
    if (req.method !== 'POST') return methodNotAllowed(req, res, 'POST');
    const back = tenantPath(tenant);
    const refuse = (status: number, reason: string): void =>
      send(req, res, status, HTML, messagePage('Action refused', reason, back, tenants, me));
    if (!backend.actions) return refuse(403, 'This page is read-only: no action token is configured (daemon.ui.actionTokenFile).');
    const origin = originRefusal(req);
    if (origin) return refuse(origin.status, origin.reason);
    const blocked = await failures.blockedForMs(auth.peer(req));
    if (blocked > 0) return tooMany(req, res, blocked);
    const form = await readForm(req);
    if (!(form instanceof URLSearchParams)) return refuse(form.status, form.reason);
    if (!backend.actions.tokenMatches(form.get('token') ?? '')) {
      await failed(req, 'action token');
      return refuse(403, 'The action token is missing or wrong. Nothing was changed.');
    }
    opts.logger?.info({ tenant, action, by: viewer.via === 'proxy' ? viewer.name : viewer.via }, 'status page: action requested');
    await backend.actions.run(tenant, action);
    return send(req, res, 303, TEXT, 'done\n', { location: `${back}?done=${action}` });
  };
}
