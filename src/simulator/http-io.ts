/**
 * Request reading and response writing for the simulator, including the body-level faults
 * (truncate, drip) and backpressure for streamed bodies: handlers return a SimResponse
 * value and never touch the socket, so faults compose with every route.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FaultRule } from './types.ts';

export interface SimRequest {
  method: string;
  /** Path as sent, without query. */
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  bodyBytes: number;
  /** Parsed JSON body; undefined when empty. */
  body: unknown;
  /** Set when the body was present but not JSON. */
  bodyInvalid: boolean;
}

export interface JsonResponse {
  status: number;
  headers?: Record<string, string>;
  json?: unknown;
}

export interface StreamResponse {
  status: number;
  headers: Record<string, string>;
  /** Body chunks; each is written as one res.write() (callers batch rows into ~64 KiB). */
  stream: Iterable<string | Buffer>;
}

export type SimResponse = JsonResponse | StreamResponse;

const MAX_BODY_BYTES = 16 * 1024 * 1024;

export class BodyTooLargeError extends Error {}

export async function readRequest(req: IncomingMessage): Promise<SimRequest> {
  const url = new URL(req.url ?? '/', 'http://simulator.invalid');
  const chunks: Buffer[] = [];
  let size = 0;
  // Plain events rather than `for await`: this runs for every one of 10k+ requests per second.
  await new Promise<void>((resolve, reject) => {
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.once('end', resolve);
    req.once('error', reject);
  });
  if (size > MAX_BODY_BYTES) throw new BodyTooLargeError(`request body larger than ${MAX_BODY_BYTES} bytes`);
  let body: unknown;
  let bodyInvalid = false;
  if (size > 0) {
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      bodyInvalid = true;
    }
  }
  return {
    method: (req.method ?? 'GET').toUpperCase(),
    path: url.pathname,
    query: url.searchParams,
    headers: req.headers,
    bodyBytes: size,
    body,
    bodyInvalid,
  };
}

/** A cut near `want` that is not on a line boundary (so a CSV consumer sees a partial row). */
function midRowCut(buf: Buffer, want: number): number {
  const boundary = (k: number): boolean => buf[k - 1] === 0x0a || buf[k] === 0x0a;
  for (let k = Math.max(1, want); k < buf.length; k++) if (!boundary(k)) return k;
  for (let k = Math.min(want, buf.length - 1); k > 0; k--) if (!boundary(k)) return k;
  return Math.min(Math.max(1, want), buf.length);
}

/** Thrown inside a streamed write once a truncate fault has cut the connection. */
class Truncated extends Error {}

/**
 * Writes a chunk honouring backpressure, and the body faults: `truncate` cuts the socket after
 * `afterBytes` (never exactly on a line boundary, so the cut is mid-row); `drip` sends tiny pieces.
 */
class BodyWriter {
  private sent = 0;
  private readonly res: ServerResponse;
  private readonly fault: FaultRule | undefined;
  private readonly cutAt: number;

  constructor(res: ServerResponse, fault: FaultRule | undefined, defaultCut: number) {
    this.res = res;
    this.fault = fault;
    this.cutAt = fault?.kind === 'truncate' ? Math.max(1, fault.afterBytes ?? defaultCut) : Infinity;
  }

  async write(data: string | Buffer): Promise<void> {
    if (!this.fault) return this.raw(data);
    const buf = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    if (this.sent + buf.length >= this.cutAt) {
      const part = buf.subarray(0, midRowCut(buf, this.cutAt - this.sent));
      this.sent += part.length;
      // Let the partial data reach the socket before cutting it, or the client may see nothing at all.
      await new Promise<void>((resolve) => this.res.write(part, () => resolve()));
      await sleep(10);
      this.res.socket?.destroy();
      throw new Truncated();
    }
    if (this.fault?.kind === 'drip') {
      const step = Math.max(1, this.fault.chunkBytes ?? 16);
      for (let i = 0; i < buf.length; i += step) {
        await this.raw(buf.subarray(i, i + step));
        await sleep(this.fault.delayMs ?? 5);
      }
      return;
    }
    await this.raw(buf);
  }

  private async raw(chunk: Buffer | string): Promise<void> {
    this.sent += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length;
    if (this.res.destroyed) throw new Truncated();
    if (!this.res.write(chunk)) {
      await new Promise<void>((resolve) => {
        const done = (): void => {
          this.res.off('drain', done);
          this.res.off('close', done);
          resolve();
        };
        this.res.on('drain', done);
        this.res.on('close', done);
      });
    }
  }
}

/** Sends `r`; returns false when the connection was cut (fault or client gone) before the end. */
export async function writeResponse(res: ServerResponse, r: SimResponse, bodyFault: FaultRule | undefined): Promise<boolean> {
  try {
    if ('stream' in r) {
      res.writeHead(r.status, r.headers);
      const w = new BodyWriter(res, bodyFault, 64 * 1024);
      for (const chunk of r.stream) {
        await w.write(chunk);
        if (res.destroyed) return false;
      }
    } else {
      const text = r.json === undefined ? '' : JSON.stringify(r.json);
      const headers: Record<string, string> = { ...r.headers };
      if (text) headers['content-type'] ??= 'application/scim+json; charset=utf-8';
      headers['content-length'] = String(Buffer.byteLength(text));
      res.writeHead(r.status, headers);
      if (!bodyFault) {
        res.end(text); // headers and body leave in one write
        return true;
      }
      if (text) await new BodyWriter(res, bodyFault, Math.floor(Buffer.byteLength(text) / 2)).write(text);
    }
    // Not awaited: 'finish' never comes if the client went away, and nothing waits on it.
    res.end();
    return true;
  } catch (e) {
    if (e instanceof Truncated) return false;
    throw e;
  }
}

/** Starts `server` on a port (0: any) of a host (default loopback); returns its base URL, no trailing slash. */
export async function listenOn(
  server: Server,
  opts: { port?: number | undefined; host?: string | undefined },
  scheme: 'http' | 'https' = 'http',
): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return `${scheme}://${host}:${addr.port}`;
}
