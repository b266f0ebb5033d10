/**
 * The one retry policy for every request to the platform (and the HTTP-based sinks):
 * retry network errors, 408, 429 and 5xx except 501; never any other 4xx.
 * Delays are capped exponential backoff with full jitter; a server's Retry-After wins
 * (up to `maxRetryAfterMs`).
 */

export interface RetryPolicy {
  /** Total attempts including the first. */
  maxAttempts: number;
  /** First backoff step, milliseconds. */
  baseDelayMs: number;
  /** Cap for one backoff step, milliseconds. */
  maxDelayMs: number;
  /** Cap for an honoured Retry-After, milliseconds. */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxAttempts: 6,
  baseDelayMs: 200, // ms
  maxDelayMs: 30_000, // ms
  maxRetryAfterMs: 120_000, // ms
};

export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || (status >= 500 && status !== 501);
}

/** Parse Retry-After (delta-seconds or HTTP-date) into milliseconds, or undefined. */
export function parseRetryAfter(value: string | string[] | undefined, now: number = Date.now()): number | undefined {
  const raw = Array.isArray(value) ? value[0] : value;
  if (raw === undefined || raw.trim() === '') return undefined;
  const trimmed = raw.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}

/**
 * Delay before attempt `attempt + 1` (attempt counts from 1).
 * `random` is injectable so tests can pin the jitter.
 */
export function backoffDelay(
  policy: RetryPolicy,
  attempt: number,
  retryAfterMs: number | undefined,
  random: () => number = Math.random,
): number {
  if (retryAfterMs !== undefined) return Math.min(retryAfterMs, policy.maxRetryAfterMs);
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(t);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
