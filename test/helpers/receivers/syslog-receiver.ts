/**
 * A TCP or TLS syslog listener on 127.0.0.1:0 that parses RFC 6587 octet-counted frames
 * (`<len> <msg>`, len in bytes) and records each message. To exercise reconnects it can
 * drop every open connection (`dropAll`), never read from the first N connections
 * (`stallConnections`, a receiver that hangs), or reset the first connection once it has
 * read a number of messages (`resetFirstAfter`, a receiver that dies mid-batch).
 */
import { createServer as createTcpServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer } from 'node:tls';

export interface SyslogReceiver {
  port: number;
  messages: string[];
  connections: number;
  /** Framing problems seen (a bad length prefix); must stay empty. */
  errors: string[];
  /** The first N connections are accepted but never read. */
  stallConnections: number;
  /** The first connection is reset after this many messages (0: never). */
  resetFirstAfter: number;
  /** Destroys every open connection (server side). */
  dropAll(): void;
  /** Open server-side connections. */
  open(): number;
  close(): Promise<void>;
}

export async function startSyslogReceiver(tls?: { key: string; cert: string }): Promise<SyslogReceiver> {
  const sockets = new Set<Socket>();
  const r: SyslogReceiver = {
    port: 0,
    messages: [],
    connections: 0,
    errors: [],
    stallConnections: 0,
    resetFirstAfter: 0,
    dropAll: () => {
      for (const s of sockets) s.destroy();
    },
    open: () => sockets.size,
    close: async () => undefined,
  };
  const onSocket = (socket: Socket): void => {
    r.connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    if (r.connections <= r.stallConnections) {
      socket.pause();
      return;
    }
    let buf = Buffer.alloc(0);
    const first = r.connections === 1;
    let seen = 0;
    socket.on('data', (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      for (;;) {
        const sp = buf.indexOf(0x20);
        if (sp < 0) break;
        const lenText = buf.subarray(0, sp).toString('ascii');
        if (!/^[1-9]\d*$/.test(lenText)) {
          r.errors.push(`bad length prefix ${JSON.stringify(lenText)}`);
          socket.destroy();
          return;
        }
        const len = Number(lenText);
        if (buf.length < sp + 1 + len) break;
        r.messages.push(buf.subarray(sp + 1, sp + 1 + len).toString('utf8'));
        buf = buf.subarray(sp + 1 + len);
        if (first && r.resetFirstAfter > 0 && ++seen >= r.resetFirstAfter) {
          socket.resetAndDestroy();
          return;
        }
      }
    });
  };
  const server: Server = tls ? createTlsServer({ key: tls.key, cert: tls.cert }, onSocket) : createTcpServer(onSocket);
  server.on('tlsClientError', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  r.port = (server.address() as AddressInfo).port;
  r.close = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    });
  return r;
}
