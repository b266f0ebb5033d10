/**
 * The status page's own HTTP server, apart from the metrics/probe server (daemon.http): a
 * NetworkPolicy works on ports, so Prometheus can be admitted to metrics without being
 * admitted to a page that names people. Binds daemon.ui.host:port (loopback by default).
 * `buildStatusPage` assembles the handler (testable without a socket); `createStatusPageServer`
 * adds the socket with the same bounds as the metrics server.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Secret } from '../config/secret.ts';
import { ConfigError } from '../errors.ts';
import type { Logger } from '../observability/logger.ts';
import { MIN_TOKEN_LENGTH } from './actions.ts';
import { uiAuth } from './auth.ts';
import type { UiConfig } from './config-schema.ts';
import { FailedCredentials } from './failed-credentials.ts';
import { createUiHandler, type UiHandler } from './handler.ts';
import { hostAllowlist } from './host-check.ts';
import type { UiBackend } from './view.ts';

export interface StatusPageOptions {
  config: UiConfig;
  /** daemon.ui.readTokenFile's content. */
  readToken: Secret | undefined;
  backend: UiBackend;
  logger: Logger;
  now?: () => number;
}

export interface StatusPageServer {
  listen(): Promise<{ url: string }>;
  close(): Promise<void>;
  server: Server;
}

/** How long close() lets an in-flight page finish before cutting it, milliseconds. */
const CLOSE_GRACE_MS = 2_000;

export function buildStatusPage(o: StatusPageOptions): UiHandler {
  const token = o.readToken?.reveal();
  if (token !== undefined && token.length < MIN_TOKEN_LENGTH) {
    throw new ConfigError('the status page read token is too short', [
      `daemon.ui.readTokenFile: the file must hold at least ${MIN_TOKEN_LENGTH} characters (e.g. openssl rand -hex 32)`,
    ]);
  }
  const c = o.config;
  if (token === undefined && c.trustedProxy === undefined)
    o.logger.warn('status page: neither daemon.ui.readTokenFile nor daemon.ui.trustedProxy is set, so nobody can sign in to it');
  return createUiHandler({
    backend: o.backend,
    auth: uiAuth({
      ...(token !== undefined ? { readToken: token } : {}),
      ...(c.trustedProxy ? { trustedProxies: c.trustedProxy.addresses } : {}),
      redact: c.redact,
      sessionMinutes: c.sessionMinutes,
      secureCookie: c.secureCookie,
      ...(o.now ? { now: o.now } : {}),
    }),
    failures: new FailedCredentials(),
    hostAllowed: hostAllowlist(c.host, c.allowedHosts),
    logger: o.logger,
  });
}

export function createStatusPageServer(o: StatusPageOptions): StatusPageServer {
  const handler = buildStatusPage(o);
  const server = createServer((req, res) => {
    handler(req, res).catch((e: unknown) => {
      o.logger.error({ err: e }, 'status page failed');
      // Internal messages may name hosts or keys: the client gets a generic answer.
      if (!res.headersSent) {
        res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' });
        res.end('internal error\n');
      } else res.destroy();
    });
  });
  server.headersTimeout = 10_000; // ms
  server.requestTimeout = 15_000; // ms
  server.keepAliveTimeout = 5_000; // ms
  server.on('clientError', (_err, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n');
    else socket.destroy();
  });
  return {
    server,
    listen() {
      return new Promise((resolve, reject) => {
        const onError = (e: Error): void => reject(e);
        server.once('error', onError);
        server.listen(o.config.port, o.config.host, () => {
          server.off('error', onError);
          const addr = server.address() as AddressInfo;
          const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
          const url = `http://${host}:${addr.port}`;
          o.logger.info({ url }, 'status page listening');
          resolve({ url });
        });
      });
    },
    close() {
      if (!server.listening) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const force = setTimeout(() => server.closeAllConnections(), CLOSE_GRACE_MS);
        server.close((e) => {
          clearTimeout(force);
          if (e) reject(e);
          else resolve();
        });
        server.closeIdleConnections();
      });
    },
  };
}
