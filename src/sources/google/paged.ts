/**
 * One Directory API call with Google's recommended backoff, and full paged listings on top.
 * A listing returns every item or throws: a page that stays throttled or failing, or that
 * comes back cut short, fails the whole read (the source never returns a partial directory).
 */
import { ErrorCodes, SyncError } from '../../errors.ts';
import { backoffDelay, sleep, type RetryPolicy } from '../../platform/retry.ts';
import { TruncatedPageError, googleError, googleErrorInfo, isRetryable, type ClassifyContext } from './classify.ts';

export interface CallEnv {
  policy: RetryPolicy;
  signal?: AbortSignal | undefined;
  classify: Omit<ClassifyContext, 'what'>;
  /** Called before each backoff (for logs and counters). */
  onRetry?: (what: string, attempt: number, delayMs: number, reason: string) => void;
}

/** The `data` of a gaxios response, checked to be a JSON object. */
export async function callApi(what: string, fn: () => Promise<{ data: unknown }>, env: CallEnv): Promise<Record<string, unknown>> {
  for (let attempt = 1; ; attempt++) {
    env.signal?.throwIfAborted();
    try {
      const res = await fn();
      const data = res.data;
      if (data === null || typeof data !== 'object' || Array.isArray(data))
        throw new TruncatedPageError(`${what}: response body is not a JSON object`);
      return data as Record<string, unknown>;
    } catch (e) {
      env.signal?.throwIfAborted();
      if (!isRetryable(e) || attempt >= env.policy.maxAttempts) throw googleError(e, { ...env.classify, what }, attempt);
      const info = googleErrorInfo(e);
      const delay = backoffDelay(env.policy, attempt, info.retryAfterSeconds === undefined ? undefined : info.retryAfterSeconds * 1000);
      env.onRetry?.(
        what,
        attempt,
        delay,
        e instanceof TruncatedPageError ? 'truncated' : (info.reason ?? String(info.status ?? 'network')),
      );
      await sleep(delay, env.signal);
    }
  }
}

/**
 * What one listing may cost, whatever the server hands out: page requests (a server that never
 * stops handing out new page tokens) and time for the whole listing, every page and backoff
 * included. The same defaults as the platform's SCIM listings (docs/reconcile.md#listing-bounds).
 */
export interface ListingLimits {
  maxPages: number;
  deadlineMs: number;
}
export const GOOGLE_LISTING_LIMITS: ListingLimits = { maxPages: 200_000, deadlineMs: 3_600_000 };

/**
 * Every page of a list call. `fetchPage(pageToken)` performs one request; `key` is the
 * array property (`users`, `groups`, `members`), absent when a page is empty, as Google does.
 */
export async function listAll<T>(
  what: string,
  key: string,
  fetchPage: (pageToken: string | undefined) => Promise<{ data: unknown }>,
  env: CallEnv,
  onItems: (items: T[]) => void,
  limits: ListingLimits = GOOGLE_LISTING_LIMITS,
): Promise<number> {
  let token: string | undefined;
  const seen = new Set<string>();
  const deadline = Date.now() + limits.deadlineMs;
  for (let page = 1; ; page++) {
    if (page > limits.maxPages)
      throw new SyncError(
        ErrorCodes.LISTING_TOO_LARGE,
        'fatal',
        `${what}: more than ${limits.maxPages} pages; refusing to return a partial directory`,
      );
    if (Date.now() > deadline)
      throw new SyncError(
        ErrorCodes.LISTING_DEADLINE,
        'transient',
        `${what}: not complete after ${Math.round(limits.deadlineMs / 1000)} s (page ${page}); refusing to return a partial directory`,
      );
    const data = await callApi(`${what} page ${page}`, () => fetchPage(token), env);
    const items = data[key];
    if (items !== undefined && !Array.isArray(items))
      throw googleError(new TruncatedPageError(`${key} is not a list`), { ...env.classify, what: `${what} page ${page}` });
    if (items) onItems(items as T[]);
    const next = data['nextPageToken'];
    if (typeof next !== 'string' || next === '') return page;
    // A server that hands back a token it already gave would loop forever.
    if (seen.has(next))
      throw googleError(new TruncatedPageError('repeated nextPageToken'), { ...env.classify, what: `${what} page ${page}` });
    seen.add(next);
    token = next;
  }
}
