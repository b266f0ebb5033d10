/**
 * The status page's own HTTP server, apart from the metrics/probe server (daemon.http): a
 * NetworkPolicy works on ports, so Prometheus can be admitted to metrics without being
 * admitted to a page that names people. Binds daemon.ui.host:port (loopback by default).
 * `buildStatusPage` assembles the handler (testable without a socket); `createStatusPageServer`
 * adds the socket with the same bounds as the metrics server.
 */
import { createServer, type Server } from 'node:http';
import type { Secret } from '../config/secret.ts';
import { ConfigError } from '../errors.ts';
import { boundClients, closeServer, listenServer } from '../observability/server-lifecycle.ts';
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
  /** daemon.ui.redactedReadTokenFile's content. */
  redactedReadToken?: Secret | undefined;
  backend: UiBackend;
  logger: Logger;
  now?: () => number;
}

export interface StatusPageServer {
  listen(): Promise<{ url: string }>;
  close(): Promise<void>;
  server: Server;
}

export function buildStatusPage(o: StatusPageOptions): UiHandler {
  const token = checkedToken(o.readToken, 'daemon.ui.readTokenFile');
  const redactedToken = checkedToken(o.redactedReadToken, 'daemon.ui.redactedReadTokenFile');
  if (token !== undefined && token === redactedToken)
    throw new ConfigError('the status page read tokens are the same', [
      'daemon.ui.redactedReadTokenFile: use a token of its own, not the one in daemon.ui.readTokenFile',
    ]);
  const c = o.config;
  if (token === undefined && redactedToken === undefined && c.trustedProxy === undefined)
    o.logger.warn(
      'status page: none of daemon.ui.readTokenFile, redactedReadTokenFile or trustedProxy is set, so nobody can sign in to it',
    );
  return createUiHandler({
    backend: o.backend,
    auth: uiAuth({
      ...(token !== undefined ? { readToken: token } : {}),
      ...(redactedToken !== undefined ? { redactedReadToken: redactedToken } : {}),
      ...(c.trustedProxy ? { trustedProxy: c.trustedProxy } : {}),
      redact: c.redact,
      sessionMinutes: c.sessionMinutes,
      secureCookie: c.secureCookie,
      ...(o.now ? { now: o.now } : {}),
    }),
    failures: new FailedCredentials(),
    hostAllowed: hostAllowlist(c.host, c.allowedHosts),
    logger: o.logger,
    ...(c.traceUrl !== undefined ? { traceUrl: c.traceUrl } : {}),
  });
}

function checkedToken(secret: Secret | undefined, key: string): string | undefined {
  const value = secret?.reveal();
  if (value !== undefined && value.length < MIN_TOKEN_LENGTH)
    throw new ConfigError('the status page read token is too short', [
      `${key}: the file must hold at least ${MIN_TOKEN_LENGTH} characters (e.g. openssl rand -hex 32)`,
    ]);
  return value;
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
  boundClients(server);
  return {
    server,
    listen() {
      return listenServer(server, o.config.port, o.config.host, o.logger, 'status page');
    },
    close() {
      return closeServer(server);
    },
  };
}
