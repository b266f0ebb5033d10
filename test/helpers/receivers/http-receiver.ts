/**
 * A real HTTP server on 127.0.0.1:0 that records every request (body gunzipped) and
 * answers through a handler the test supplies. The base for the HEC and _bulk receivers.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** Body after Content-Encoding: gzip was undone. */
  body: Buffer;
  /** Size on the wire. */
  rawBytes: number;
  at: number;
}

export interface Reply {
  status: number;
  headers?: Record<string, string>;
  body?: string | object;
}

export type Handler = (req: ReceivedRequest, index: number) => Reply | Promise<Reply>;

export interface HttpReceiver {
  url: string;
  requests: ReceivedRequest[];
  setHandler(h: Handler): void;
  close(): Promise<void>;
}

export async function startHttpReceiver(handler: Handler = () => ({ status: 200, body: {} })): Promise<HttpReceiver> {
  let current = handler;
  const requests: ReceivedRequest[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const raw = Buffer.concat(chunks);
        const body = req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw;
        const rec: ReceivedRequest = {
          method: req.method ?? '',
          path: req.url ?? '',
          headers: req.headers,
          body,
          rawBytes: raw.length,
          at: Date.now(),
        };
        const index = requests.push(rec) - 1;
        let reply: Reply;
        try {
          reply = await current(rec, index);
        } catch (e) {
          reply = { status: 500, body: { error: String(e) } };
        }
        const text = reply.body === undefined ? '' : typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body);
        res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
        res.end(text);
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    setHandler: (h) => {
      current = h;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
