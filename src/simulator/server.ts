/**
 * startSimulator(): the platform simulator on a real socket — SCIM 2.0 under /api/scim/v2
 * (alias /scim/v2), the audit-log CSV export, fault injection and a request log. Routing
 * and fault application live here; everything else is in the modules it wires together.
 */
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { setTimeout as sleep } from 'node:timers/promises';
import { SimAuditLog } from './audit.ts';
import { AUDIT_EXPORT_PATH, handleAuditExport, platformError } from './audit-routes.ts';
import { authenticatePlatform, authenticateScim } from './auth.ts';
import { FaultEngine, canonicalPath, isCollectionPath, type FaultPlan } from './faults.ts';
import {
  BodyTooLargeError,
  listenOn,
  readRequest,
  writeResponse,
  type JsonResponse,
  type SimRequest,
  type SimResponse,
} from './http-io.ts';
import { mix, mulberry32 } from './prng.ts';
import { ScimHttpError, scimErrorBody } from './scim-error.ts';
import { handleMeta, type MetaEnv } from './scim-meta.ts';
import { handleResources, type ScimEnv } from './scim-routes.ts';
import { seedUsers } from './seed.ts';
import { quirkSet } from './quirks.ts';
import { SCIM_PREFIX, SimStore } from './store.ts';
import type { RequestLogEntry, Simulator, SimulatorOptions, SimulatorToken } from './types.ts';
import { SimUserAttributes } from './user-attributes.ts';

function isScimPath(canonical: string): boolean {
  return canonical === SCIM_PREFIX || canonical.startsWith(`${SCIM_PREFIX}/`);
}

function scimError(status: number, detail: string, scimType?: string, headers: Record<string, string> = {}): JsonResponse {
  return { status, headers, json: scimErrorBody(status, detail, scimType) };
}

/** The window of an audit-log export request (for 'drop-events' faults); undefined for any other request. */
function exportWindowOf(req: SimRequest, audit: SimAuditLog): { fromMs: number; toMs: number } | undefined {
  if (req.path !== AUDIT_EXPORT_PATH) return undefined;
  try {
    return audit.window(req.query.get('start'), req.query.get('end'));
  } catch {
    return undefined;
  }
}

interface Router {
  tokens: ReadonlyMap<string, SimulatorToken>;
  scim: ScimEnv;
  meta: MetaEnv;
  audit: SimAuditLog;
  /** /api/v1/user-attributes/ and /api/v1/user-attribute-values/. */
  attributes: SimUserAttributes;
}

function route(req: SimRequest, plan: FaultPlan, r: Router): SimResponse {
  const canonical = canonicalPath(req.path);
  if (isScimPath(canonical)) {
    try {
      const auth = authenticateScim(req.headers.authorization, r.tokens);
      if (!auth.ok) return scimError(auth.status, auth.message);
      const rest = canonical.slice(SCIM_PREFIX.length).replace(/\/+$/, '');
      if (req.method === 'GET') {
        const meta = handleMeta(rest, r.meta);
        if (meta) return meta;
      }
      if (rest === '/Bulk') return scimError(501, 'Bulk operations are not supported');
      return handleResources(req, rest, r.scim, plan.list) ?? scimError(404, `no SCIM endpoint ${rest || '/'}`);
    } catch (e) {
      if (e instanceof ScimHttpError) return { status: e.status, json: e.toBody() };
      throw e;
    }
  }
  if (req.path === AUDIT_EXPORT_PATH) return handleAuditExport(req, r.audit, r.tokens, plan.drop);
  const attributes = r.attributes.handle(req, r.tokens);
  if (attributes) return attributes;
  if (req.path.startsWith('/api/v1/') || req.path.startsWith('/build/api/v1/')) {
    const auth = authenticatePlatform(req.headers.authorization, r.tokens);
    if (!auth.ok) return platformError(auth.status, auth.message);
  }
  return platformError(404, `Not found: ${req.method} ${req.path}`);
}

/** The response a 'status' fault sends, in the error shape of the surface it hits. */
function faultResponse(req: SimRequest, status: number, retryAfterSeconds: number | undefined): JsonResponse {
  const headers: Record<string, string> = retryAfterSeconds !== undefined ? { 'retry-after': String(retryAfterSeconds) } : {};
  const message = status === 429 ? 'Too many requests' : `Injected failure (HTTP ${status})`;
  return isScimPath(canonicalPath(req.path)) ? scimError(status, message, undefined, headers) : platformError(status, message, headers);
}

export async function startSimulator(opts: SimulatorOptions = {}): Promise<Simulator> {
  const seed = opts.seed ?? 1;
  const quirks = quirkSet(opts.quirks);
  const store = new SimStore({
    caseSensitiveUserName: quirks.has('case-sensitive-username'),
    uniqueEmailTypes: quirks.has('unique-email-types'),
  });
  const tokens = new Map((opts.tokens ?? [{ token: 'test-token' }]).map((t) => [t.token, t] as const));
  const faults = new FaultEngine(opts.faults ?? [], mulberry32(mix(seed, 0xfa17)));
  const audit = new SimAuditLog(seed, opts.audit ?? {}, opts.auditFeatureEnabled ?? true);
  const maxPageSize = opts.maxPageSize ?? 100;
  const patchSupported = opts.patchSupported ?? true;
  const requests: RequestLogEntry[] = [];
  const record = opts.recordRequests ?? true;
  const router: Router = {
    tokens,
    audit,
    attributes: new SimUserAttributes(store, opts.userAttributes),
    scim: {
      store,
      maxPageSize,
      patchSupported,
      patch: {
        memberRemoveDialect: opts.memberRemoveDialect ?? 'both',
        ...(opts.maxOperationsPerPatch !== undefined ? { maxOperationsPerPatch: opts.maxOperationsPerPatch } : {}),
      },
      quirks,
      ...(opts.afterListPage ? { afterListPage: opts.afterListPage } : {}),
    },
    meta: { baseUrl: '', maxPageSize, patchSupported, serviceProviderConfig: opts.serviceProviderConfig ?? true },
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://simulator.invalid');
    const entry: RequestLogEntry = {
      method: (req.method ?? 'GET').toUpperCase(),
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      status: 0,
      bodyBytes: 0,
      at: Date.now(),
    };
    const finish = (status: number): void => {
      entry.status = status;
      if (record) requests.push(entry);
      opts.onRequest?.(entry);
    };
    let sreq: SimRequest;
    try {
      sreq = await readRequest(req);
    } catch (e) {
      if (!(e instanceof BodyTooLargeError)) throw e;
      await writeResponse(res, scimError(413, e.message), undefined);
      return finish(413);
    }
    entry.bodyBytes = sreq.bodyBytes;
    if (sreq.body !== undefined && sreq.method !== 'GET') entry.body = sreq.body;
    const isList = (sreq.method === 'GET' && isCollectionPath(sreq.path)) || (sreq.method === 'POST' && /\/\.search\/?$/.test(sreq.path));
    const plan = faults.plan(sreq.method, sreq.path, isList, exportWindowOf(sreq, audit));
    if (plan.fired.length > 0) entry.faults = plan.fired;
    if (plan.latencyMs > 0) await sleep(plan.latencyMs);
    if (plan.action?.kind === 'reset') {
      req.socket.destroy();
      return finish(0);
    }
    const response =
      plan.action?.kind === 'status'
        ? faultResponse(sreq, plan.action.status ?? 503, plan.action.retryAfterSeconds)
        : route(sreq, plan, router);
    if (plan.action?.kind === 'reset-after-commit') {
      // The operation happened; the client never learns it (the classic ambiguous POST).
      req.socket.destroy();
      return finish(0);
    }
    await writeResponse(res, response, plan.body);
    finish(response.status);
  };

  const listener = (req: IncomingMessage, res: ServerResponse): void => {
    handle(req, res).catch((e: unknown) => {
      if (!res.headersSent) {
        const body = JSON.stringify(scimErrorBody(500, `simulator error: ${(e as Error).message}`));
        res
          .writeHead(500, { 'content-type': 'application/scim+json; charset=utf-8', 'content-length': String(Buffer.byteLength(body)) })
          .end(body);
      } else {
        res.destroy();
      }
    });
  };
  const server: Server = opts.tls ? createHttpsServer({ key: opts.tls.key, cert: opts.tls.cert }, listener) : createHttpServer(listener);
  server.on('clientError', (_err, socket) => socket.destroy());

  const url = await listenOn(server, opts, opts.tls ? 'https' : 'http');
  store.baseUrl = url;
  router.meta.baseUrl = url;
  if (opts.users) seedUsers(store, opts.users, seed);

  return {
    url,
    store,
    audit,
    attributes: router.attributes,
    requests,
    setFaults: (rules) => faults.set(rules),
    clearRequests: () => {
      requests.length = 0;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}
