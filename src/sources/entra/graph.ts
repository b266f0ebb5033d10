/**
 * Microsoft Graph requests through the project's HTTP dispatcher: the bearer token from
 * the credential, bounded bodies and time, Graph's throttling guidance (429 and 503 with
 * Retry-After, backoff otherwise), and paged listings that follow `@odata.nextLink`. A
 * listing returns every item or throws; a page that stays throttled, fails, or arrives cut
 * short fails the whole read. A next link must stay on the Graph origin.
 */
import type { TokenCredential } from '@azure/identity';
import type { Dispatcher } from 'undici';
import { SourceError, SyncError, errorCodeOf } from '../../errors.ts';
import { readBodyCapped } from '../../platform/read-body.ts';
import { backoffDelay, parseRetryAfter, sleep, type RetryPolicy } from '../../platform/retry.ts';
import { graphError, isRetryableStatus, parseGraphError, tokenError, tokenRoles, type EntraContext } from './classify.ts';

const MAX_PAGE_BYTES = 64 * 1024 * 1024;
const NETWORK =
  /ECONNRESET|ECONNREFUSED|ETIMEDOUT|EPIPE|EAI_AGAIN|ENOTFOUND|EHOSTUNREACH|UND_ERR_|terminated|other side closed|socket hang up/i;

export interface GraphClientOptions {
  graphUrl: string;
  /** For diagnosing a token failure MSAL reports without detail. */
  authorityHost?: string;
  scope: string;
  credential: TokenCredential;
  dispatcher: Dispatcher;
  timeoutMs: number;
  policy: RetryPolicy;
  ctx: EntraContext;
  signal?: AbortSignal | undefined;
  onRetry?: (what: string, attempt: number, delayMs: number, reason: string) => void;
}

export interface GetOptions {
  /** `ConsistencyLevel: eventual` (advanced queries: `$count`, `$search`, `ne`, `endswith`…). */
  eventual?: boolean;
  /** `Prefer: odata.maxpagesize=N` (delta queries take no `$top`). */
  maxPageSize?: number;
}

export class GraphClient {
  readonly origin: string;
  private readonly o: GraphClientOptions;
  private lastToken: string | undefined;

  constructor(o: GraphClientOptions) {
    this.o = o;
    this.origin = new URL(o.graphUrl).origin;
  }

  /** An access token (the library caches and renews it); failures carry their fix. */
  async token(): Promise<string> {
    try {
      const t = await this.o.credential.getToken(this.o.scope, this.o.signal ? { abortSignal: this.o.signal } : {});
      if (!t) throw new SourceError(`no token for app ${this.o.ctx.clientId}`);
      this.lastToken = t.token;
      return t.token;
    } catch (e) {
      this.o.signal?.throwIfAborted();
      const err = tokenError(e, this.o.ctx);
      // MSAL reports a metadata failure without the server's answer: ask for it, for the AADSTS code.
      if (/no OpenID metadata/.test(err.message)) throw (await this.metadataError()) ?? err;
      throw err;
    }
  }

  /**
   * Why MSAL could not resolve the authority: the identity platform's own error for the
   * tenant's OpenID metadata (a config mistake), or, when it cannot be reached or answers
   * 5xx, a transient failure rather than a config error. Undefined: no better explanation.
   */
  private async metadataError(): Promise<SyncError | undefined> {
    if (!this.o.authorityHost) return undefined;
    const host = new URL(this.o.authorityHost).host;
    let status: number;
    let text: string;
    try {
      const { request } = await import('undici');
      const url = `${this.o.authorityHost.replace(/\/+$/, '')}/${encodeURIComponent(this.o.ctx.tenantId)}/v2.0/.well-known/openid-configuration`;
      const res = await request(url, { dispatcher: this.o.dispatcher, signal: AbortSignal.timeout(this.o.timeoutMs) });
      status = res.statusCode;
      text = (await readBodyCapped(res.body, 256 * 1024)).text;
    } catch (e) {
      const code = errorCodeOf(e) ?? errorCodeOf((e as { cause?: unknown }).cause) ?? (e instanceof Error ? e.name : 'error');
      return new SourceError(
        `the identity platform at ${host} cannot be reached (${code}): a token could not be requested; nothing was changed`,
      );
    }
    if (status === 200) return undefined;
    if (isRetryableStatus(status))
      return new SourceError(`the identity platform at ${host} answered HTTP ${status} for the tenant's metadata; nothing was changed`, {
        status,
      });
    try {
      const body = JSON.parse(text) as { error_description?: unknown };
      if (typeof body.error_description !== 'string') return undefined;
      return tokenError({ errorResponse: { errorDescription: body.error_description } }, this.o.ctx);
    } catch {
      return undefined;
    }
  }

  /** The application permissions of the current token (for diagnostics). */
  roles(): string[] | undefined {
    return this.lastToken ? tokenRoles(this.lastToken) : undefined;
  }

  /** `/v1.0/…` relative to graphUrl, or an absolute link Graph returned (same origin only). */
  url(pathOrLink: string): string {
    if (/^https?:/i.test(pathOrLink)) {
      const u = new URL(pathOrLink);
      if (u.origin !== this.origin)
        throw new SourceError(`Graph returned a link to ${u.origin}, not ${this.origin}: refusing to follow it`);
      return u.toString();
    }
    return `${this.o.graphUrl.replace(/\/+$/, '')}${pathOrLink}`;
  }

  /** One GET with retries; the body as a JSON object. */
  async get(pathOrLink: string, what: string, opts: GetOptions = {}): Promise<Record<string, unknown>> {
    const { request } = await import('undici');
    const url = this.url(pathOrLink);
    const policy = this.o.policy;
    for (let attempt = 1; ; attempt++) {
      this.o.signal?.throwIfAborted();
      const token = await this.token();
      let retryReason: string;
      let retryAfterMs: number | undefined;
      try {
        const signal = this.o.signal
          ? AbortSignal.any([this.o.signal, AbortSignal.timeout(this.o.timeoutMs)])
          : AbortSignal.timeout(this.o.timeoutMs);
        const res = await request(url, {
          method: 'GET',
          headers: {
            authorization: `Bearer ${token}`,
            accept: 'application/json',
            ...(opts.eventual ? { consistencylevel: 'eventual' } : {}),
            ...(opts.maxPageSize ? { prefer: `odata.maxpagesize=${opts.maxPageSize}` } : {}),
          },
          dispatcher: this.o.dispatcher,
          signal,
        });
        const { text, overflow } = await readBodyCapped(res.body, MAX_PAGE_BYTES);
        if (overflow) throw new SourceError(`${what}: response larger than ${MAX_PAGE_BYTES} bytes; nothing was changed`);
        if (res.statusCode === 200) {
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          if (json !== null && typeof json === 'object' && !Array.isArray(json)) return json as Record<string, unknown>;
          retryReason = 'truncated';
          if (attempt >= policy.maxAttempts)
            throw new SourceError(`${what}: the response was cut short or not JSON after ${attempt} attempts; nothing was changed`);
        } else {
          const ra = res.headers['retry-after'];
          retryAfterMs = parseRetryAfter(typeof ra === 'string' ? ra : undefined);
          const info = parseGraphError(res.statusCode, text, retryAfterMs);
          if (!isRetryableStatus(res.statusCode) || attempt >= policy.maxAttempts) {
            throw graphError(info, what, this.o.ctx, this.roles(), attempt);
          }
          retryReason = `${res.statusCode}${info.code ? ` ${info.code}` : ''}`;
        }
      } catch (e) {
        this.o.signal?.throwIfAborted();
        if (e instanceof SyncError) throw e;
        const code = errorCodeOf(e) ?? errorCodeOf((e as { cause?: unknown }).cause);
        const text = `${code ?? ''} ${e instanceof Error ? `${e.name} ${e.message}` : String(e)}`;
        const retryable = NETWORK.test(text) || (e instanceof Error && e.name === 'TimeoutError');
        if (!retryable || attempt >= policy.maxAttempts)
          throw new SourceError(
            `${what} failed${attempt > 1 ? ` after ${attempt} attempts` : ''}: ${code ?? (e instanceof Error ? e.message : String(e))}; nothing was changed`,
          );
        retryReason = code ?? 'network';
      }
      const delay = backoffDelay(policy, attempt, retryAfterMs);
      this.o.onRetry?.(what, attempt, delay, retryReason);
      await sleep(delay, this.o.signal);
    }
  }

  /**
   * Every page of a collection: `onItems` per page, then the next link until there is none.
   * Returns the number of pages and the final `@odata.deltaLink`, when Graph sent one.
   */
  async listAll<T>(
    path: string,
    what: string,
    onItems: (items: T[]) => void | Promise<void>,
    opts: GetOptions = {},
  ): Promise<{ pages: number; deltaLink: string | undefined }> {
    let link: string | undefined = path;
    const seen = new Set<string>();
    for (let page = 1; ; page++) {
      const data: Record<string, unknown> = await this.get(link, `${what} page ${page}`, opts);
      const items = data['value'];
      if (!Array.isArray(items)) throw new SourceError(`${what} page ${page}: no value list in the response; nothing was changed`);
      await onItems(items as T[]);
      const next = data['@odata.nextLink'];
      if (typeof next !== 'string' || next === '') {
        const delta = data['@odata.deltaLink'];
        return { pages: page, deltaLink: typeof delta === 'string' ? delta : undefined };
      }
      if (seen.has(next)) throw new SourceError(`${what} page ${page}: Graph repeated a next link; nothing was changed`);
      seen.add(next);
      link = next;
    }
  }
}
