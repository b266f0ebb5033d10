/**
 * A loopback HTTP/1.1 server that answers with hand-written bytes on a raw socket (node:net,
 * port 0), so it can send what no well-behaved server library would: a chunked body without
 * its terminator, a body short of its Content-Length, a close-delimited body, a body that
 * drips or never ends, a redirect, a login page. Every response closes its connection.
 */
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface HostileRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: Record<string, string>;
}

/** The socket of one response, with helpers that respect backpressure. */
export interface HostileIo {
  /** Resolves when written (or at once when the peer is gone: then `closed` is true). */
  write(data: string | Buffer): Promise<void>;
  end(data?: string | Buffer): void;
  /** Cuts the connection (no FIN handshake of a complete response). */
  destroy(): void;
  readonly closed: boolean;
}

export type Responder = (io: HostileIo, req: HostileRequest) => void | Promise<void>;

export interface HostileServer {
  url: string;
  requests: HostileRequest[];
  /** Body and head bytes written to clients so far. */
  bytesSent(): number;
  /** Connections currently open. */
  openConnections(): number;
  close(): Promise<void>;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function parseHead(head: string): HostileRequest {
  const [requestLine = '', ...lines] = head.split('\r\n');
  const [method = 'GET', target = '/'] = requestLine.split(' ');
  const url = new URL(target, 'http://x');
  const headers: Record<string, string> = {};
  for (const l of lines) {
    const i = l.indexOf(':');
    if (i > 0) headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
  }
  return { method, path: url.pathname, query: Object.fromEntries(url.searchParams), headers };
}

export async function startHostileServer(respond: Responder): Promise<HostileServer> {
  const requests: HostileRequest[] = [];
  const sockets = new Set<Socket>();
  let sent = 0;
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
    let buffered = '';
    const onData = (d: Buffer): void => {
      buffered += d.toString('latin1');
      const end = buffered.indexOf('\r\n\r\n');
      if (end === -1) return;
      socket.off('data', onData);
      const req = parseHead(buffered.slice(0, end));
      requests.push(req);
      const io: HostileIo = {
        get closed() {
          return socket.destroyed || !socket.writable;
        },
        write: (data) =>
          new Promise<void>((resolve) => {
            if (socket.destroyed || !socket.writable) return resolve();
            sent += typeof data === 'string' ? Buffer.byteLength(data, 'latin1') : data.length;
            if (socket.write(data)) return resolve();
            const done = (): void => {
              socket.off('drain', done);
              socket.off('close', done);
              resolve();
            };
            socket.once('drain', done);
            socket.once('close', done);
          }),
        end: (data) => {
          if (data === undefined) return void socket.end();
          sent += typeof data === 'string' ? Buffer.byteLength(data, 'latin1') : data.length;
          socket.end(data);
        },
        destroy: () => socket.destroy(),
      };
      Promise.resolve(respond(io, req)).catch(() => socket.destroy());
    };
    socket.on('data', onData);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    bytesSent: () => sent,
    openConnections: () => sockets.size,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A response head; `connection: close` always. */
export function head(status: number, headers: Record<string, string | number> = {}): string {
  const reason = { 200: 'OK', 204: 'No Content', 301: 'Moved Permanently', 302: 'Found' }[status] ?? 'Status';
  const lines = Object.entries({ connection: 'close', ...headers }).map(([k, v]) => `${k}: ${v}`);
  return `HTTP/1.1 ${status} ${reason}\r\n${lines.join('\r\n')}\r\n\r\n`;
}

/** Ready-made answers, one per hostile shape. */
export const answer = {
  /** A complete response with a Content-Length. */
  full(status: number, headers: Record<string, string | number>, body = ''): Responder {
    return (io) => io.end(head(status, { ...headers, 'content-length': Buffer.byteLength(body) }) + body);
  },
  /** A body delimited by closing the connection (no length, no chunking): the client cannot tell it is cut. */
  closeDelimited(contentType: string, body: string): Responder {
    return (io) => io.end(head(200, { 'content-type': contentType }) + body);
  },
  /** A chunked body; without `terminate` the final zero-length chunk never comes and the socket closes. */
  chunked(contentType: string, chunks: string[], terminate: boolean): Responder {
    return async (io) => {
      await io.write(head(200, { 'content-type': contentType, 'transfer-encoding': 'chunked' }));
      for (const c of chunks) await io.write(`${Buffer.byteLength(c).toString(16)}\r\n${c}\r\n`);
      if (terminate) io.end('0\r\n\r\n');
      else {
        await sleep(20);
        io.destroy();
      }
    };
  },
  /** A body shorter than its declared Content-Length, then the connection closes. */
  shortOfLength(contentType: string, body: string, declared: number): Responder {
    return async (io) => {
      await io.write(head(200, { 'content-type': contentType, 'content-length': declared }) + body);
      await sleep(20);
      io.destroy();
    };
  },
  /** `prefix`, then one byte every `everyMs` for as long as the client reads. */
  drip(contentType: string, prefix: string, everyMs: number): Responder {
    return async (io) => {
      await io.write(head(200, { 'content-type': contentType, 'transfer-encoding': 'chunked' }));
      await io.write(`${Buffer.byteLength(prefix).toString(16)}\r\n${prefix}\r\n`);
      while (!io.closed) {
        await sleep(everyMs);
        await io.write('1\r\nx\r\n');
      }
    };
  },
  /** `prefix`, then `chunkBytes` of one line with no line break, again and again, until the client hangs up. */
  endlessLine(contentType: string, prefix: string, chunkBytes = 64 * 1024): Responder {
    const block = 'a'.repeat(chunkBytes);
    return async (io) => {
      await io.write(head(200, { 'content-type': contentType, 'transfer-encoding': 'chunked' }));
      await io.write(`${Buffer.byteLength(prefix).toString(16)}\r\n${prefix}\r\n`);
      while (!io.closed) await io.write(`${chunkBytes.toString(16)}\r\n${block}\r\n`);
    };
  },
};
