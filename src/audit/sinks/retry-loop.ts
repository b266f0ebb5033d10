/**
 * The retry loop every networked sink shares: an attempt either concludes (`done`), asks
 * for a retry (`retry`, optionally with the server's Retry-After), fails at the transport
 * level (TransportFailure, also retried) or throws anything else (propagated: fatal).
 * Retries use the project's capped exponential backoff with jitter; when the budget is
 * spent the caller gets a transient SyncError and the engine keeps its cursor.
 */
import { ErrorCodes, SyncError } from '../../errors.ts';
import { backoffDelay, sleep, type RetryPolicy } from '../../platform/retry.ts';
import type { SinkInstrument } from './instrument.ts';
import type { RequestResult } from './metrics.ts';

export type AttemptOutcome<T> =
  | { done: T; result: RequestResult; events: number }
  | { retry: string; retryAfterMs?: number | undefined; events: number };

/** A failure below the protocol (connect, reset, timeout): retried. `code` is Node's/undici's. */
export class TransportFailure extends Error {
  readonly code: string;
  constructor(code: string, message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'TransportFailure';
    this.code = code;
  }
}

const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT', 'ETIMEDOUT']);

export interface RetryLoopOptions {
  policy: RetryPolicy;
  instrument: SinkInstrument;
  random?: (() => number) | undefined;
}

export async function runWithRetry<T>(
  opts: RetryLoopOptions,
  what: string,
  attempt: (n: number) => Promise<AttemptOutcome<T>>,
  signal?: AbortSignal,
): Promise<T> {
  const { policy, instrument } = opts;
  for (let n = 1; ; n++) {
    signal?.throwIfAborted();
    const started = performance.now();
    let reason: string;
    let retryAfterMs: number | undefined;
    let events = 0;
    let timeout = false;
    try {
      const out = await attempt(n);
      events = out.events;
      if ('done' in out) {
        instrument.request(out.result, (performance.now() - started) / 1000, out.events);
        return out.done;
      }
      reason = out.retry;
      retryAfterMs = out.retryAfterMs;
    } catch (e) {
      if (!(e instanceof TransportFailure)) {
        instrument.request('error', (performance.now() - started) / 1000, events);
        if (e instanceof SyncError) instrument.error(e.code, e.message);
        throw e;
      }
      reason = e.message;
      timeout = TIMEOUT_CODES.has(e.code);
    }
    instrument.request('retry', (performance.now() - started) / 1000, events);
    if (n >= policy.maxAttempts) {
      const err = new SyncError(
        timeout ? ErrorCodes.TIMEOUT : ErrorCodes.TRANSIENT,
        'transient',
        `sink ${instrument.sink}: ${what}: ${reason} after ${n} attempts`,
      );
      instrument.error(err.code, err.message);
      throw err;
    }
    const delayMs = backoffDelay(policy, n, retryAfterMs, opts.random);
    instrument.retry(n, delayMs, reason);
    await sleep(delayMs, signal);
  }
}
