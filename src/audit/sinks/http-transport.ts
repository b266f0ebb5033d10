/**
 * The HTTP boundary shared by the `http`, `splunk-hec` and `elasticsearch` sinks: one
 * keep-alive undici Agent per sink, optional gzip, bounded response bodies, and the retry
 * loop (capped exponential backoff with jitter, Retry-After honoured). Each sink classifies
 * its own responses through `run`'s attempt function (retry-loop.ts); transport failures and retryable
 * statuses count against the same budget, and when it runs out the caller gets a transient
 * SyncError. Request headers (credentials) never enter an error, log, metric or span. With
 * tracing on, each exchange is a client span carrying W3C `traceparent` to the receiver.
 */
import { promisify } from 'node:util';
import { gzip as gzipCb } from 'node:zlib';
import type { Dispatcher } from 'undici';
import { createDispatcher } from '../../platform/dispatcher.ts';
import { ErrorCodes, SyncError, errorCodeOf } from '../../errors.ts';
import { isRetryableStatus, parseRetryAfter, type RetryPolicy } from '../../platform/retry.ts';
import type { SinkInstrument } from './instrument.ts';
import { TransportFailure, runWithRetry, type AttemptOutcome } from './retry-loop.ts';
import { redact } from './secrets.ts';
import type { TlsOptions } from './tls.ts';
import { readBodyCapped } from '../../platform/read-body.ts';
import { startClientSpan } from '../../observability/tracing/spans.ts';
import { pathTemplate } from '../../observability/tracing/path-template.ts';

const gzip = promisify(gzipCb);

export { TransportFailure, type AttemptOutcome } from './retry-loop.ts';

export interface HttpTransportOptions {
  origin: string;
  policy: RetryPolicy;
  instrument: SinkInstrument;
  /** Headers-and-body timeout of one attempt, milliseconds. */
  timeoutMs: number;
  tls?: TlsOptions;
  /** Values to scrub from any server text we quote (a server may echo the request). */
  secrets?: string[];
  /** Cap on a buffered response body, bytes. */
  maxResponseBytes?: number;
  random?: () => number;
}

export interface HttpRequest {
  method: 'POST' | 'PUT';
  path: string;
  headers: Record<string, string>;
  body: Buffer;
  gzip?: boolean;
}

export interface HttpResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** Seconds the attempt took (for the duration histogram). */
  seconds: number;
}

export class HttpTransport {
  private readonly agent: Dispatcher;
  private readonly opts: HttpTransportOptions;
  private readonly originUrl: URL;

  constructor(opts: HttpTransportOptions) {
    this.opts = opts;
    this.originUrl = new URL(opts.origin);
    // Through HTTPS_PROXY / HTTP_PROXY unless NO_PROXY names the host (platform/dispatcher.ts).
    this.agent = createDispatcher({
      connections: 4, // one sink writes sequentially; a few sockets cover ack polling
      headersTimeoutMs: opts.timeoutMs,
      bodyTimeoutMs: opts.timeoutMs,
      connectTimeoutMs: Math.min(opts.timeoutMs, 10_000),
      ...(opts.tls ? { tls: opts.tls } : {}),
    });
  }

  /** Compress once, before the retry loop, so every attempt sends the same bytes. */
  async prepare(req: HttpRequest): Promise<HttpRequest> {
    if (!req.gzip) return req;
    return { ...req, gzip: false, body: await gzip(req.body), headers: { ...req.headers, 'content-encoding': 'gzip' } };
  }

  /** One exchange. Network failures throw TransportFailure; any HTTP status is returned. */
  async send(req: HttpRequest, signal?: AbortSignal): Promise<HttpResponse> {
    const prepared = req.gzip ? await this.prepare(req) : req;
    const started = performance.now();
    const { sink, type } = this.opts.instrument;
    const span = startClientSpan(prepared.method, pathTemplate(prepared.path), this.originUrl, 1, {
      'scimsync.sink': sink,
      'scimsync.sink_type': type,
    });
    let res: Dispatcher.ResponseData;
    try {
      res = await this.agent.request({
        origin: this.opts.origin,
        path: prepared.path,
        method: prepared.method,
        headers: span.headers({ 'user-agent': 'scim-audit-sync', ...prepared.headers, 'content-length': String(prepared.body.length) }),
        body: prepared.body,
        ...(signal ? { signal } : {}),
      });
      span.end({ status: res.statusCode });
    } catch (e) {
      span.end({ error: e });
      if (signal?.aborted) throw e;
      const code = errorCodeOf(e) ?? 'UND_ERR';
      throw new TransportFailure(code, `network error ${code}`, e);
    }
    let text: string;
    try {
      text = await readCapped(res.body, this.opts.maxResponseBytes ?? 16 * 1024 * 1024);
    } catch (e) {
      if (signal?.aborted) throw e;
      const code = errorCodeOf(e) ?? 'UND_ERR';
      throw new TransportFailure(code, `error reading the response: ${code}`, e);
    }
    return { status: res.statusCode, headers: res.headers, text, seconds: (performance.now() - started) / 1000 };
  }

  /** Runs `attempt` under the sink's retry policy (see retry-loop.ts). */
  run<T>(what: string, attempt: (n: number) => Promise<AttemptOutcome<T>>, signal?: AbortSignal): Promise<T> {
    return runWithRetry({ policy: this.opts.policy, instrument: this.opts.instrument, random: this.opts.random }, what, attempt, signal);
  }

  /** Server text safe to quote in a rejection reason: secrets scrubbed, whitespace folded, truncated. */
  quote(text: string, max = 300): string {
    const folded = redact(text, this.opts.secrets ?? [])
      .replace(/\s+/g, ' ')
      .trim();
    return folded.length > max ? `${folded.slice(0, max)}…` : folded;
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}

/** The common status verdicts: 2xx ok; 401/403 fatal; 408/429/5xx (not 501) retry; the rest is the sink's call. */
export function classifyStatus(res: HttpResponse): 'ok' | 'auth' | 'retry' | 'reject' {
  if (res.status >= 200 && res.status < 300) return 'ok';
  if (res.status === 401 || res.status === 403) return 'auth';
  if (isRetryableStatus(res.status)) return 'retry';
  return 'reject';
}

export function retryAfterMs(res: HttpResponse): number | undefined {
  return parseRetryAfter(res.headers['retry-after']);
}

/** The fatal auth error every HTTP sink throws: names the config keys to check, never the value. */
export function authError(sink: string, type: string, status: number, keys: string): SyncError {
  const code = status === 401 ? ErrorCodes.AUTH_INVALID : ErrorCodes.AUTH_FORBIDDEN;
  const what = status === 401 ? 'credential missing, malformed or expired' : 'credential valid but not authorized';
  return new SyncError(code, 'fatal', `sink ${sink} (${type}): ${what} (HTTP ${status}): check ${keys}`, { status });
}

async function readCapped(body: Dispatcher.ResponseData['body'], max: number): Promise<string> {
  const { text, overflow } = await readBodyCapped(body, max);
  if (overflow) throw Object.assign(new Error(`response larger than ${max} bytes`), { code: 'E_RESPONSE_TOO_LARGE' });
  return text;
}
