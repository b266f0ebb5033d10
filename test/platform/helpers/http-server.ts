/** A scripted node:http server on 127.0.0.1:0 that records every request it receives. */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
  /** performance.now() when the request arrived, milliseconds. */
  at: number;
}

/** `n` is the 1-based number of this request on the server. */
export type Handler = (req: IncomingMessage, res: ServerResponse, n: number, body: string) => void | Promise<void>;

export interface TestServer {
  url: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

export async function startTestServer(handler: Handler): Promise<TestServer> {
  const requests: RecordedRequest[] = [];
  const server = createServer((req, res) => {
    const at = performance.now();
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body, at });
      Promise.resolve(handler(req, res, requests.length, body)).catch((e: unknown) => {
        res.statusCode = 599;
        res.end(String(e));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/** Drop the connection without any response: the client sees a reset / "other side closed". */
export function resetConnection(req: IncomingMessage): void {
  req.socket.destroy();
}

/** Send headers and half a body, then drop the connection. */
export function truncateJson(res: ServerResponse, status = 200): void {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': '200' });
  res.write('{"partial":', () => setTimeout(() => res.socket?.destroy(), 5));
}
