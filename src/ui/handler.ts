/**
 * The /ui routes on the daemon's HTTP server:
 *   GET  /ui                                   every tenant at a glance
 *   GET  /ui/tenants/<id>?user=&result=&action= one tenant: schedule, runs, guard, quarantine, audit, sinks, log
 *   GET  /ui/assets/app.css | app.js           the only assets (no CDN)
 *   POST /ui/tenants/<id>/actions/<action>     approve-deletes | resume | trigger (token form, see actions.ts)
 * Responses carry a strict Content-Security-Policy (own scripts and styles only, forms to self,
 * no framing) and are never cached.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RecordResult } from '../provisioning-log/record.ts';
import { isAction, originRefusal, readForm } from './actions.ts';
import { CSS, JS } from './assets.ts';
import { messagePage, overviewPage, tenantPage, tenantPath } from './page.ts';
import type { LogFilter, UiBackend } from './view.ts';

export type UiHandler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

const HTML = 'text/html; charset=utf-8';
const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  // Not no-referrer: with it, browsers send `Origin: null` on form posts and the origin check could not tell this page from another.
  'referrer-policy': 'same-origin',
  'cache-control': 'no-store',
};

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

function filterOf(params: URLSearchParams): LogFilter {
  const user = params.get('user')?.trim();
  const result = params.get('result');
  const action = params.get('action')?.trim();
  return {
    ...(user ? { user: user.slice(0, 200) } : {}),
    ...(result === 'ok' || result === 'failed' || result === 'held' ? { result: result as RecordResult } : {}),
    ...(action ? { action: action.slice(0, 50) } : {}),
  };
}

export function createUiHandler(backend: UiBackend): UiHandler {
  return async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://ui.invalid');
    const path = url.pathname.replace(/(.)\/+$/, '$1');
    const tenants = backend.tenantIds();
    const notFound = (): void => send(req, res, 404, HTML, messagePage('Not found', 'There is no such page.', '/ui', tenants));
    const get = req.method === 'GET' || req.method === 'HEAD';

    if (path === '/ui/assets/app.css' || path === '/ui/assets/app.js') {
      if (!get) return send(req, res, 405, 'text/plain; charset=utf-8', 'method not allowed\n', { allow: 'GET, HEAD' });
      const css = path.endsWith('.css');
      return send(req, res, 200, css ? 'text/css; charset=utf-8' : 'text/javascript; charset=utf-8', css ? CSS : JS, {
        'cache-control': 'max-age=300',
      });
    }
    if (path === '/ui') {
      if (!get) return send(req, res, 405, 'text/plain; charset=utf-8', 'method not allowed\n', { allow: 'GET, HEAD' });
      return send(req, res, 200, HTML, overviewPage(await backend.summaries()));
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
      if (!get) return send(req, res, 405, 'text/plain; charset=utf-8', 'method not allowed\n', { allow: 'GET, HEAD' });
      const filter = filterOf(url.searchParams);
      const done = url.searchParams.get('done');
      const view = await backend.tenant(tenant, filter);
      return send(
        req,
        res,
        200,
        HTML,
        tenantPage(view, {
          filter,
          actionsEnabled: backend.actions !== undefined,
          tenants,
          ...(done && NOTICES[done] ? { notice: { text: NOTICES[done], error: false } } : {}),
        }),
      );
    }

    if (!isAction(action)) return notFound();
    if (req.method !== 'POST') return send(req, res, 405, 'text/plain; charset=utf-8', 'method not allowed\n', { allow: 'POST' });
    const back = tenantPath(tenant);
    const refuse = (status: number, reason: string): void =>
      send(req, res, status, HTML, messagePage('Action refused', reason, back, tenants));
    if (!backend.actions) return refuse(403, 'This page is read-only: no action token is configured (daemon.ui.actionTokenFile).');
    const origin = originRefusal(req);
    if (origin) return refuse(origin.status, origin.reason);
    const form = await readForm(req);
    if (!(form instanceof URLSearchParams)) return refuse(form.status, form.reason);
    if (!backend.actions.tokenMatches(form.get('token') ?? ''))
      return refuse(403, 'The action token is missing or wrong. Nothing was changed.');
    await backend.actions.run(tenant, action);
    return send(req, res, 303, 'text/plain; charset=utf-8', 'done\n', { location: `${back}?done=${action}` });
  };
}
