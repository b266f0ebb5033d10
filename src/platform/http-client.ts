/**
 * The platform's HTTP boundary: one keep-alive undici Agent with bounded connections,
 * the auth header, HTTPS enforcement, timeouts, the retry policy and error classification.
 * Everything above this module sees either a parsed response or a classified SyncError.
 * With tracing on, each attempt is a client span (method, path template, status) whose
 * W3C `traceparent` goes with the request.
 */
import type { Dispatcher } from 'undici';
import { createDispatcher } from './dispatcher.ts';
import type { Readable } from 'node:stream';
import { ErrorCodes, SyncError, errorCodeOf, errorFromStatus, isSyncError, isTlsVerifyError } from '../errors.ts';
import { DEFAULT_RETRY_POLICY, backoffDelay, isRetryableStatus, parseRetryAfter, sleep, type RetryPolicy } from './retry.ts';
import { readBodyCapped } from './read-body.ts';
import { readOnlyInterceptor } from './read-only.ts';
import { assertSecureUrl } from './secure-url.ts';
import { startClientSpan } from '../observability/tracing/spans.ts';
import { pathTemplate } from '../observability/tracing/path-template.ts';

export { assertSecureUrl, isLoopbackHost } from './secure-url.ts';

export type AuthScheme = 'Bearer' | 'Api-Key';
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface PlatformClientOptions {
  baseUrl: string;
  token: string;
  authScheme?: AuthScheme;
  /** Allow plain http:// — only ever honoured for loopback hosts. */
  allowInsecureHttp?: boolean;
  /** Max sockets to the platform origin. */
  maxConnections?: number;
  connectTimeoutMs?: number;
  /** Time to response headers, milliseconds. */
  headersTimeoutMs?: number;
  /** Max idle time between body chunks, milliseconds. */
  bodyTimeoutMs?: number;
  /** Cap for a buffered (JSON) response body, bytes. */
  maxResponseBytes?: number;
  retry?: Partial<RetryPolicy>;
  /** Extra CA (PEM) for a private platform endpoint. */
  ca?: string;
  userAgent?: string;
  hooks?: PlatformClientHooks;
  /** Called before every attempt; the daemon plugs its global (cross-replica) rate limit in here. */
  beforeRequest?: (signal?: AbortSignal) => Promise<void>;
  /** Test seam for jitter. */
  random?: () => number;
  /** Refuse every request but GET/HEAD at the dispatcher with E_READ_ONLY (`plan`, connectivity checks). */
  readOnly?: boolean;
  /** Where HTTPS_PROXY / HTTP_PROXY / NO_PROXY are read; default process.env. */
  env?: Readonly<Record<string, string | undefined>>;
}

export interface RequestEvent {
  method: HttpMethod;
  /** Low-cardinality route label supplied by the caller (e.g. `scim_users`). */
  route: string;
  /** HTTP status, or 0 for a network failure. */
  status: number;
  durationMs: number;
  attempt: number;
}

export interface PlatformClientHooks {
  onResponse?(e: RequestEvent): void;
  onRetry?(e: RequestEvent & { delayMs: number; reason: string }): void;
  /** A 429 was received: the daemon uses this to slow every replica down. */
  onRateLimited?(e: { route: string; retryAfterMs: number | undefined }): void;
}

export interface RequestOptions {
  route: string;
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /**
   * Whether a failure that may have reached the server can be retried blindly.
   * Defaults to true for GET/PUT/DELETE/PATCH-with-replace semantics and false for POST:
   * the caller of a non-idempotent request gets an `ambiguous` error and decides (lookup, adopt).
   */
  idempotent?: boolean;
  /** Human label for error messages, e.g. `create user alice@example.com`. */
  what?: string;
}

export interface JsonResponse<T> {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: T | undefined;
}

export interface StreamResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Readable;
}

/** A failure after the request may have been processed: the caller must check before retrying. */
export class AmbiguousRequestError extends SyncError {
  readonly ambiguous = true;
}

/** Up to this size a response of known length is read in one call, bytes. */
const SMALL_BODY_BYTES = 64 * 1024;

const NETWORK_CODES_NOT_SENT = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'UND_ERR_CONNECT_TIMEOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);

export class PlatformClient {
  readonly baseUrl: URL;
  private readonly agent: Dispatcher;
  /** The agent, behind the read-only interceptor when `readOnly` is set. */
  private readonly dispatcher: Dispatcher;
  /** A read-only view shares its parent's agent and leaves closing it to the parent. */
  private readonly ownsAgent: boolean;
  private readonly authHeader: string;
  private readonly policy: RetryPolicy;
  private readonly opts: PlatformClientOptions;
  private readonly maxResponseBytes: number;

  /** `sharedAgent` is internal: see readOnlyView(). */
  constructor(opts: PlatformClientOptions, sharedAgent?: Dispatcher) {
    this.opts = opts;
    this.baseUrl = assertSecureUrl(opts.baseUrl, opts.allowInsecureHttp ?? false);
    if (!opts.token || /[\r\n]/.test(opts.token)) {
      throw new SyncError(
        ErrorCodes.CONFIG_INVALID,
        'fatal',
        'platform token is empty or contains a line break (check platform.token / platform.tokenFile)',
      );
    }
    this.authHeader = `${opts.authScheme ?? 'Bearer'} ${opts.token}`;
    this.policy = { ...DEFAULT_RETRY_POLICY, ...opts.retry };
    this.maxResponseBytes = opts.maxResponseBytes ?? 32 * 1024 * 1024; // bytes
    this.ownsAgent = sharedAgent === undefined;
    this.agent =
      sharedAgent ??
      createDispatcher({
        connections: opts.maxConnections ?? 32,
        headersTimeoutMs: opts.headersTimeoutMs ?? 30_000,
        bodyTimeoutMs: opts.bodyTimeoutMs ?? 60_000,
        connectTimeoutMs: opts.connectTimeoutMs ?? 10_000,
        ...(opts.ca ? { tls: { ca: opts.ca } } : {}),
        ...(opts.env ? { env: opts.env } : {}),
      });
    this.dispatcher = opts.readOnly === true ? this.agent.compose(readOnlyInterceptor) : this.agent;
  }

  get readOnly(): boolean {
    return this.opts.readOnly === true;
  }

  /** The same client (connections, hooks, rate limit) refusing every non-GET request: for a plan phase. */
  readOnlyView(): PlatformClient {
    return new PlatformClient({ ...this.opts, readOnly: true }, this.agent);
  }

  /** Path relative to the base URL's path (a base with a path prefix is kept). */
  resolvePath(path: string, query?: Record<string, string | number | undefined>): string {
    const basePath = this.baseUrl.pathname.replace(/\/+$/, '');
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) qs.set(k, String(v));
    const q = qs.toString();
    return `${basePath}${path}${q ? `?${q}` : ''}`;
  }

  async requestJson<T>(method: HttpMethod, path: string, opts: RequestOptions): Promise<JsonResponse<T>> {
    // The body is read inside the retry loop: a connection cut mid-body is a network failure
    // like any other (retried when idempotent, ambiguous otherwise), not a raw socket error.
    return this.send(method, path, opts, false, async (res) => {
      const text = await this.readCapped(res, opts.route);
      let body: T | undefined;
      if (text.length > 0) {
        try {
          body = JSON.parse(text) as T;
        } catch {
          throw new SyncError(
            ErrorCodes.BAD_RESPONSE,
            'transient',
            `${opts.what ?? `${method} ${opts.route}`}: response is not JSON (HTTP ${res.statusCode})`,
            { status: res.statusCode },
          );
        }
      }
      return { status: res.statusCode, headers: res.headers, body };
    });
  }

  /** Streams a successful response body; retries only happen before the body starts. */
  async stream(method: HttpMethod, path: string, opts: RequestOptions): Promise<StreamResponse> {
    return this.send(method, path, opts, true, async (res) => ({ status: res.statusCode, headers: res.headers, body: res.body }));
  }

  async close(): Promise<void> {
    if (this.ownsAgent) await this.agent.close();
  }

  private async send<R>(
    method: HttpMethod,
    path: string,
    opts: RequestOptions,
    streaming: boolean,
    consume: (res: Dispatcher.ResponseData) => Promise<R>,
  ): Promise<R> {
    const idempotent = opts.idempotent ?? method !== 'POST';
    const what = opts.what ?? `${method} ${opts.route}`;
    const headers: Record<string, string> = {
      authorization: this.authHeader,
      accept: streaming ? '*/*' : 'application/scim+json, application/json',
      'user-agent': this.opts.userAgent ?? 'scim-audit-sync',
      ...opts.headers,
    };
    let payload: string | undefined;
    if (opts.body !== undefined) {
      payload = JSON.stringify(opts.body);
      headers['content-type'] ??= 'application/scim+json';
    }
    const reqPath = this.resolvePath(path, opts.query);
    const template = pathTemplate(reqPath);
    for (let attempt = 1; ; attempt++) {
      await this.opts.beforeRequest?.(opts.signal);
      const started = performance.now();
      const span = startClientSpan(method, template, this.baseUrl, attempt, { 'scimsync.route': opts.route });
      let res: Dispatcher.ResponseData | undefined;
      try {
        res = await this.dispatcher.request({
          origin: this.baseUrl.origin,
          path: reqPath,
          method,
          headers: span.headers(headers),
          body: payload,
          signal: opts.signal,
        });
        span.end({ status: res.statusCode });
        if (res.statusCode < 400) {
          const event: RequestEvent = {
            method,
            route: opts.route,
            status: res.statusCode,
            durationMs: performance.now() - started,
            attempt,
          };
          this.opts.hooks?.onResponse?.(event);
          return await consume(res);
        }
      } catch (e) {
        span.end({ error: e });
        if (opts.signal?.aborted) throw e;
        if (isSyncError(e)) throw e;
        const code = errorCodeOf(e);
        const event: RequestEvent = { method, route: opts.route, status: 0, durationMs: performance.now() - started, attempt };
        // A failure while reading a successful response was already reported with its status.
        if (res === undefined) this.opts.hooks?.onResponse?.(event);
        const notSent = res === undefined && code !== undefined && NETWORK_CODES_NOT_SENT.has(code);
        const timeout = code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT';
        // The host and URL (without the query, which may hold a filter value) say where it failed.
        const target = `${this.baseUrl.origin}${reqPath.split('?')[0]}`;
        const reason =
          code === 'ENOTFOUND'
            ? `cannot resolve host ${this.baseUrl.hostname} (ENOTFOUND) for ${target}`
            : `network error ${code ?? 'unknown'} at ${target}`;
        // A certificate the configured trust refuses will not be trusted on a retry either.
        if (res === undefined && isTlsVerifyError(code)) {
          throw new SyncError(
            ErrorCodes.CONFIG_INVALID,
            'fatal',
            `${what}: TLS verification of ${this.baseUrl.host} failed (${code}) for ${target}; trust its CA with platform.caFile (or the source's caFile)`,
            { cause: e },
          );
        }
        // A name that does not resolve will not resolve in 200 ms either: fail now, with the fix.
        if (code === 'ENOTFOUND') {
          throw new SyncError(
            ErrorCodes.TRANSIENT,
            'transient',
            `${what}: ${reason}; check the host name in platform.baseUrl and the DNS (or HTTPS_PROXY) of this machine`,
            { cause: e },
          );
        }
        if (!idempotent && !notSent) {
          throw new AmbiguousRequestError(
            timeout ? ErrorCodes.TIMEOUT : ErrorCodes.TRANSIENT,
            'transient',
            `${what}: ${reason}; the request may have been processed`,
            { cause: e },
          );
        }
        if (attempt >= this.policy.maxAttempts) {
          throw new SyncError(
            timeout ? ErrorCodes.TIMEOUT : ErrorCodes.TRANSIENT,
            'transient',
            `${what}: ${reason} after ${attempt} attempts`,
            { cause: e },
          );
        }
        const delayMs = backoffDelay(this.policy, attempt, undefined, this.opts.random);
        this.opts.hooks?.onRetry?.({ ...event, delayMs, reason });
        await sleep(delayMs, opts.signal);
        continue;
      }
      const event: RequestEvent = { method, route: opts.route, status: res.statusCode, durationMs: performance.now() - started, attempt };
      this.opts.hooks?.onResponse?.(event);

      const retryAfterMs = parseRetryAfter(res.headers['retry-after']);
      const detail = await this.errorDetail(res);
      if (res.statusCode === 429) this.opts.hooks?.onRateLimited?.({ route: opts.route, retryAfterMs });
      // A 429 means the request was not processed, so it is safe to repeat even for POST.
      const mayRetry = isRetryableStatus(res.statusCode) && (idempotent || res.statusCode === 429);
      if (!mayRetry || attempt >= this.policy.maxAttempts) {
        const err = errorFromStatus(res.statusCode, what, {
          ...(detail ? { detail } : {}),
          ...(retryAfterMs !== undefined ? { retryAfterSeconds: Math.ceil(retryAfterMs / 1000) } : {}),
        });
        // 429 means "not processed", so it is a plain transient failure even for a POST.
        if (!idempotent && err.kind === 'transient' && res.statusCode !== 429) {
          throw new AmbiguousRequestError(err.code, err.kind, `${err.message}; the request may have been processed`, {
            status: err.status,
            ...(detail ? { detail } : {}),
          });
        }
        throw err;
      }
      const delayMs = backoffDelay(this.policy, attempt, retryAfterMs, this.opts.random);
      this.opts.hooks?.onRetry?.({ ...event, delayMs, reason: `HTTP ${res.statusCode}` });
      await sleep(delayMs, opts.signal);
    }
  }

  private async readCapped(res: Pick<Dispatcher.ResponseData, 'body' | 'headers'>, route: string): Promise<string> {
    const { body } = res;
    const tooLarge = (): SyncError =>
      new SyncError(ErrorCodes.RESPONSE_TOO_LARGE, 'rejected', `${route}: response larger than ${this.maxResponseBytes} bytes`);
    const declared = Number(res.headers['content-length']);
    if (Number.isInteger(declared) && declared > this.maxResponseBytes) {
      // Nobody reads this body: swallow the abort the destroy emits.
      body.on('error', () => undefined);
      body.destroy();
      throw tooLarge();
    }
    // Small bodies of known length (single resources: the apply hot path) in one read; large
    // ones (list pages) chunk by chunk, which holds less memory at once.
    if (Number.isInteger(declared) && declared >= 0 && declared <= SMALL_BODY_BYTES) return body.text();
    const { text, overflow } = await readBodyCapped(body, this.maxResponseBytes);
    if (overflow) throw tooLarge();
    return text;
  }

  /** The server's own message from a SCIM error or `{ "error": "…" }` body, truncated; never throws. */
  private async errorDetail(res: Pick<Dispatcher.ResponseData, 'body' | 'headers'>): Promise<string | undefined> {
    let text: string;
    try {
      text = await this.readCapped(res, 'error');
    } catch {
      return undefined;
    }
    if (!text) return undefined;
    let detail: string | undefined;
    try {
      const parsed = JSON.parse(text) as Record<string, unknown>;
      const parts = [parsed['scimType'], parsed['detail'], parsed['error'], parsed['message']].filter(
        (x): x is string => typeof x === 'string',
      );
      detail = parts.length > 0 ? parts.join(': ') : undefined;
    } catch {
      detail = text.replace(/\s+/g, ' ');
    }
    if (detail === undefined) return undefined;
    // Never echo the credential back even if a server reflects it.
    if (this.opts.token) detail = detail.split(this.opts.token).join('[redacted]');
    return detail.length > 300 ? `${detail.slice(0, 300)}…` : detail;
  }
}
