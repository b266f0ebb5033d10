/**
 * The daemon's own HTTP endpoints, on node:http (four routes do not need a framework):
 *   /metrics  Prometheus exposition of the registry
 *   /healthz  liveness: answers as long as the event loop does, checks nothing external
 *   /readyz   readiness: 200 or 503 with the daemon's checks (Redis, workers)
 *   /status   JSON snapshot from the daemon
 * The status page has its own server and port (src/ui/server.ts).
 * `buildObservabilityHandler` is the app; `createObservabilityServer` adds the socket.
 * Callback failures answer a generic 500 and are logged: internal messages (which may name
 * hosts or keys) never go to an unauthenticated client.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Registry } from 'prom-client';
import { boundClients, closeServer, listenServer } from './server-lifecycle.ts';
import type { Logger } from './logger.ts';
import { publicStatus } from './status-document.ts';
import { registry as sharedRegistry } from './metrics.ts';

export interface ReadyResult {
  ready: boolean;
  /** Per-dependency result: true/false, or a short reason such as `"connection refused"`. */
  checks: Record<string, boolean | string>;
}

export interface ObservabilityServerOptions {
  host: string;
  /** 0 picks a free port (tests). */
  port: number;
  registry?: Registry;
  ready: () => Promise<ReadyResult>;
  status: () => Promise<unknown>;
  logger: Logger;
  /** Bound on each callback (ready, status, metrics collection), milliseconds. */
  callbackTimeoutMs?: number;
}

export type ObservabilityHandler = (req: IncomingMessage, res: ServerResponse) => void;

export interface ObservabilityServer {
  listen(): Promise<{ url: string }>;
  close(): Promise<void>;
  server: Server;
}

const JSON_TYPE = 'application/json; charset=utf-8';
const DEFAULT_CALLBACK_TIMEOUT_MS = 5_000;

interface Reply {
  status: number;
  type: string;
  body: string;
}

const json = (status: number, value: unknown): Reply => ({ status, type: JSON_TYPE, body: `${JSON.stringify(value)}\n` });

function withTimeout<T>(fn: () => Promise<T>, ms: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
    // Promise.resolve().then(fn) also turns a synchronous throw into a rejection.
    Promise.resolve()
      .then(fn)
      .then(resolve, reject)
      .finally(() => clearTimeout(timer));
  });
}

export function buildObservabilityHandler(opts: Omit<ObservabilityServerOptions, 'host' | 'port'>): ObservabilityHandler {
  const reg = opts.registry ?? sharedRegistry;
  const timeoutMs = opts.callbackTimeoutMs ?? DEFAULT_CALLBACK_TIMEOUT_MS;

  const routes: Record<string, () => Promise<Reply>> = {
    '/healthz': async () => json(200, { status: 'ok' }),
    '/readyz': async () => {
      const r = await withTimeout(opts.ready, timeoutMs, 'readiness check');
      return json(r.ready ? 200 : 503, { status: r.ready ? 'ready' : 'not_ready', checks: r.checks });
    },
    '/status': async () => json(200, publicStatus(await withTimeout(opts.status, timeoutMs, 'status'))),
    '/metrics': async () => ({
      status: 200,
      type: reg.contentType,
      body: await withTimeout(() => reg.metrics(), timeoutMs, 'metrics collection'),
    }),
  };

  const send = (req: IncomingMessage, res: ServerResponse, reply: Reply, extra: Record<string, string> = {}): void => {
    const body = Buffer.from(reply.body, 'utf8');
    res.writeHead(reply.status, {
      'content-type': reply.type,
      'content-length': String(body.length),
      'cache-control': 'no-store',
      ...extra,
    });
    res.end(req.method === 'HEAD' ? undefined : body);
  };

  return (req, res) => {
    // Only the path matters; a query string (?x=1) or a trailing slash is tolerated.
    const path = (req.url ?? '/').split('?')[0]?.replace(/(.)\/+$/, '$1') ?? '/';
    const route = routes[path];
    if (route === undefined) return send(req, res, json(404, { error: 'not found' }));
    if (req.method !== 'GET' && req.method !== 'HEAD')
      return send(req, res, json(405, { error: 'method not allowed' }), { allow: 'GET, HEAD' });
    route().then(
      (reply) => send(req, res, reply),
      (e: unknown) => {
        opts.logger.error({ err: e, path }, 'observability endpoint failed');
        if (!res.headersSent) send(req, res, json(500, { error: 'internal error' }));
        else res.destroy();
      },
    );
  };
}

export function createObservabilityServer(opts: ObservabilityServerOptions): ObservabilityServer {
  const server = createServer(buildObservabilityHandler(opts));
  boundClients(server);

  return {
    server,
    listen() {
      return listenServer(server, opts.port, opts.host, opts.logger, 'observability server');
    },
    close() {
      return closeServer(server);
    },
  };
}
