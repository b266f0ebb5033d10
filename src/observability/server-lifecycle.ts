/**
 * Listening and closing for the daemon's own HTTP servers (metrics and probes, the status page):
 * a bind error rejects instead of surfacing as an `error` event, and a close finishes within
 * a grace period even when a client keeps its connection open.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from './logger.ts';

/**
 * Requests to these servers are tiny (probes, scrapes, a page): slow or idle clients do not get
 * to hold sockets, and a malformed request is answered 400 instead of surfacing as an error.
 */
export function boundClients(server: Server): void {
  server.headersTimeout = 10_000; // ms
  server.requestTimeout = 15_000; // ms
  server.keepAliveTimeout = 5_000; // ms
  server.on('clientError', (_err, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n');
    else socket.destroy();
  });
}

/** How long open connections may finish their requests on close, ms. */
const CLOSE_GRACE_MS = 2_000;

export function listenServer(server: Server, port: number, host: string, logger: Logger, what: string): Promise<{ url: string }> {
  return new Promise((resolve, reject) => {
    const onError = (e: Error): void => reject(e);
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      const addr = server.address() as AddressInfo;
      const shown = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
      const url = `http://${shown}:${addr.port}`;
      logger.info({ url }, `${what} listening`);
      resolve({ url });
    });
  });
}

export function closeServer(server: Server): Promise<void> {
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
}
