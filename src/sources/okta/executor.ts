/**
 * The request executor handed to the Okta SDK's Client: every request the SDK makes
 * (token, each page a Collection follows through `Link: rel="next"`) passes here.
 *
 * - Pacing: each rate-limit bucket's X-Rate-Limit-Remaining/Reset are remembered; when a
 *   bucket is down to `reserve` requests, the next one waits for the window to reset, so a
 *   read does not draw 429s in the first place (Okta counts 429s against the org).
 * - Retries: a 429 anyway (waits for X-Rate-Limit-Reset), 408, 5xx but 501, network
 *   failures and 200s whose body is cut short or not JSON, with capped backoff. The SDK's
 *   own executor retries only 429 and hands a truncated page to its JSON parser.
 * - Bounds: a time limit per attempt and a byte limit per body; the caller's AbortSignal.
 * - Errors: a final non-2xx becomes an OktaCallError carrying Okta's error body, so the
 *   classifier sees `errorCode` and the token endpoint's `error_description`.
 */
import type { Agent as HttpAgent } from 'node:http';
import { RequestExecutor } from '@okta/okta-sdk-nodejs';
import { errorCodeOf, isTlsVerifyError } from '../../errors.ts';
import { backoffDelay, sleep, type RetryPolicy } from '../../platform/retry.ts';

/** A non-2xx answer (after retries), or a failure to get one. */
export class OktaCallError extends Error {
  readonly status: number | undefined;
  /** Request path without query (never the org's tokens: those travel in headers and the form). */
  readonly path: string;
  readonly body: Record<string, unknown> | undefined;
  readonly headers: Record<string, string>;
  readonly attempts: number;
  readonly network: string | undefined;
  /** The TLS verification code when the server's certificate was refused. */
  tls: string | undefined;
  /** 1-based page of the listing on this path that failed. */
  page = 1;
  constructor(o: {
    status?: number;
    path: string;
    body?: Record<string, unknown>;
    headers?: Record<string, string>;
    attempts: number;
    network?: string;
  }) {
    super(o.status !== undefined ? `HTTP ${o.status} from ${o.path}` : `${o.network ?? 'network error'} on ${o.path}`);
    this.name = 'OktaCallError';
    this.status = o.status;
    this.path = o.path;
    this.body = o.body;
    this.headers = o.headers ?? {};
    this.attempts = o.attempts;
    this.network = o.network;
  }
}

export interface PacingEvent {
  bucket: string;
  waitMs: number;
  remaining: number;
}

export interface ExecutorOptions {
  /** The org's origin: the SDK follows `Link` headers, and credentials never go anywhere else. */
  origin: string;
  policy: RetryPolicy;
  /** Requests kept in hand per bucket before waiting for the reset. */
  reserve: number;
  timeoutMs: number;
  maxBodyBytes: number;
  signal?: AbortSignal | undefined;
  /** Keep-alive agents (and the trusted CAs) by protocol; the SDK's proxy agent, when set, wins. */
  agent?: ((url: URL) => HttpAgent) | undefined;
  onPace?: (e: PacingEvent) => void;
  onRetry?: (path: string, attempt: number, delayMs: number, reason: string) => void;
}

interface BucketState {
  remaining: number;
  /** Local clock, ms, when the window resets. */
  resetAtMs: number;
}

interface FetchedResponse {
  status: number;
  headers: { forEach(cb: (value: string, name: string) => void): void };
  text(): Promise<string>;
}

type RequestLike = { url?: string; method?: string; [k: string]: unknown };

/** Okta limits per endpoint: ids in the path are one bucket (`/api/v1/groups/{id}/users`). */
export function bucketOf(method: string, url: string): string {
  let path: string;
  try {
    path = new URL(url).pathname;
  } catch {
    path = url;
  }
  return `${method.toUpperCase()} ${path.replace(/\/(?:00|0o|0p)[A-Za-z0-9]{15,}/g, '/{id}')}`;
}

const NETWORK =
  /ECONNRESET|ECONNREFUSED|ETIMEDOUT|EPIPE|EAI_AGAIN|ENOTFOUND|EHOSTUNREACH|ENETUNREACH|socket hang up|premature close|network timeout|terminated/i;
/** Clock differences below this are read as the one-second resolution of the headers. */
const SKEW_TOLERANCE_MS = 2000;

export class PacedRequestExecutor extends RequestExecutor {
  private readonly o: ExecutorOptions;
  private readonly buckets = new Map<string, BucketState>();
  /** Successful responses by path: a failure names the page it happened on. */
  private readonly pages = new Map<string, number>();
  /** GET URLs already answered: a page link seen twice is a loop, not more data. */
  private readonly fetched = new Set<string>();

  constructor(o: ExecutorOptions) {
    super();
    this.o = o;
  }

  override async fetch(request: RequestLike): Promise<never> {
    const url = String(request.url ?? '');
    const method = String(request.method ?? 'GET').toUpperCase();
    const bucket = bucketOf(method, url);
    const path = (() => {
      try {
        return new URL(url).pathname;
      } catch {
        return url;
      }
    })();
    let origin: string | undefined;
    try {
      origin = new URL(url).origin;
    } catch {
      origin = undefined;
    }
    const refuse = (why: string): never => {
      const err = new OktaCallError({ path, attempts: 1, network: why });
      err.page = this.pages.get(path) ?? 1;
      throw err;
    };
    if (origin !== this.o.origin) refuse(`the server sent a page link to another origin (${origin ?? 'unparsable'}); not followed`);
    if (method === 'GET' && this.fetched.has(url)) refuse('the server repeated a page link (a paging loop)');
    for (let attempt = 1; ; attempt++) {
      this.o.signal?.throwIfAborted();
      await this.pace(bucket);
      const timeout = AbortSignal.timeout(this.o.timeoutMs);
      const signal = this.o.signal ? AbortSignal.any([this.o.signal, timeout]) : timeout;
      let res: FetchedResponse;
      let text: string;
      let failure: { reason: string; status?: number; headers?: Record<string, string>; body?: Record<string, unknown> };
      let retryAfterMs: number | undefined;
      try {
        const agent = request['agent'] ?? this.o.agent;
        res = (await super.fetch({
          ...request,
          signal,
          size: this.o.maxBodyBytes,
          ...(agent ? { agent } : {}),
        } as never)) as unknown as FetchedResponse;
        const headers: Record<string, string> = {};
        res.headers.forEach((v, k) => {
          headers[k.toLowerCase()] = v;
        });
        this.observe(bucket, headers);
        text = await res.text();
        const body = parseObject(text);
        if (res.status >= 200 && res.status < 300) {
          if (body === undefined) failure = { reason: 'truncated', status: res.status, headers };
          else {
            this.pages.set(path, (this.pages.get(path) ?? 0) + 1);
            if (method === 'GET') this.fetched.add(url);
            return new Response(text, { status: res.status, headers }) as never;
          }
        } else {
          failure = { reason: String(res.status), status: res.status, headers, ...(isRecord(body) ? { body } : {}) };
          if (res.status === 429) retryAfterMs = this.untilReset(headers);
        }
      } catch (e) {
        this.o.signal?.throwIfAborted();
        const msg = `${(e as { code?: string }).code ?? ''} ${(e as Error).message ?? ''} ${String((e as { cause?: unknown }).cause ?? '')}`;
        const timedOut = timeout.aborted;
        const tooBig = (e as { type?: string }).type === 'max-size';
        const code = errorCodeOf(e) ?? errorCodeOf((e as { cause?: unknown }).cause);
        if (isTlsVerifyError(code)) {
          // A certificate the configured trust refuses will not be trusted on a retry either.
          const err = new OktaCallError({ path, attempts: attempt, network: `TLS verification failed (${code})` });
          err.tls = code;
          throw err;
        }
        if (tooBig) {
          const err = new OktaCallError({ path, attempts: attempt, network: `response larger than ${this.o.maxBodyBytes} bytes` });
          err.page = (this.pages.get(path) ?? 0) + 1;
          throw err;
        }
        if (!timedOut && !NETWORK.test(msg)) throw e;
        failure = { reason: timedOut ? `timeout after ${this.o.timeoutMs} ms` : (NETWORK.exec(msg)?.[0] ?? 'network') };
      }
      const st = failure.status;
      const retryable = failure.reason === 'truncated' || st === undefined || st === 429 || st === 408 || (st >= 500 && st !== 501);
      if (!retryable || attempt >= this.o.policy.maxAttempts) {
        const err = new OktaCallError({
          path,
          attempts: attempt,
          ...(st !== undefined && failure.reason !== 'truncated' ? { status: st } : {}),
          ...(failure.body ? { body: failure.body } : {}),
          ...(failure.headers ? { headers: failure.headers } : {}),
          ...(st === undefined
            ? { network: failure.reason }
            : failure.reason === 'truncated'
              ? { network: 'response cut short or not JSON' }
              : {}),
        });
        err.page = (this.pages.get(path) ?? 0) + 1;
        throw err;
      }
      const delay = backoffDelay(this.o.policy, attempt, retryAfterMs);
      this.o.onRetry?.(path, attempt, delay, failure.reason === '429' ? 'rate limited (429)' : failure.reason);
      await sleep(delay, this.o.signal);
    }
  }

  /** Wait for the window to reset when the bucket is down to its reserve. */
  private async pace(bucket: string): Promise<void> {
    const b = this.buckets.get(bucket);
    if (!b) return;
    const now = Date.now();
    if (now >= b.resetAtMs) {
      this.buckets.delete(bucket);
      return;
    }
    if (b.remaining > this.o.reserve) {
      b.remaining--; // requests in flight count before their answer arrives
      return;
    }
    const waitMs = Math.min(b.resetAtMs - now, this.o.policy.maxDelayMs);
    this.o.onPace?.({ bucket, waitMs, remaining: b.remaining });
    await sleep(waitMs, this.o.signal);
    this.buckets.delete(bucket);
  }

  private observe(bucket: string, headers: Record<string, string>): void {
    const remaining = Number(headers['x-rate-limit-remaining']);
    const resetAtMs = this.resetAtMs(headers);
    if (!Number.isFinite(remaining) || resetAtMs === undefined) return;
    const prev = this.buckets.get(bucket);
    // Answers arrive out of order under concurrency: keep the lower count of one window.
    if (prev && prev.resetAtMs === resetAtMs && prev.remaining < remaining) return;
    this.buckets.set(bucket, { remaining, resetAtMs });
  }

  /** X-Rate-Limit-Reset (epoch seconds, server clock) on the local clock, corrected by Date when they differ. */
  private resetAtMs(headers: Record<string, string>): number | undefined {
    const reset = Number(headers['x-rate-limit-reset']);
    if (!Number.isFinite(reset) || reset <= 0) return undefined;
    const serverNow = Date.parse(headers['date'] ?? '');
    const skew = Number.isNaN(serverNow) ? 0 : Date.now() - serverNow;
    // Plus a margin: the reset second is the server's, rounded.
    return reset * 1000 + (Math.abs(skew) > SKEW_TOLERANCE_MS ? skew : 0) + 50;
  }

  private untilReset(headers: Record<string, string>): number | undefined {
    const at = this.resetAtMs(headers);
    return at === undefined ? undefined : Math.max(0, at - Date.now());
  }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** The body as JSON (an object or an array), or undefined when it is not. */
function parseObject(text: string): unknown {
  try {
    const v: unknown = JSON.parse(text);
    return v !== null && typeof v === 'object' ? v : undefined;
  } catch {
    return undefined;
  }
}
