/**
 * A tiny real HTTP server that answers the audit export with hand-written bodies, for the
 * shapes the simulator never produces (ragged rows, broken quotes, odd timestamp formats,
 * a 200 with a JSON error body).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface CsvReply {
  status?: number;
  contentType?: string;
  body: string | Buffer;
}

export interface CsvServer {
  url: string;
  queries: Array<Record<string, string>>;
  close(): Promise<void>;
}

export async function startCsvServer(reply: (query: Record<string, string>) => CsvReply): Promise<CsvServer> {
  const queries: Array<Record<string, string>> = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const query = Object.fromEntries(url.searchParams);
    queries.push(query);
    const r = reply(query);
    res.writeHead(r.status ?? 200, { 'content-type': r.contentType ?? 'text/csv; charset=utf-8' });
    res.end(r.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    queries,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
