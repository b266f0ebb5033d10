/**
 * The platform request budget of one tenant, shared by every replica: a Redis token bucket
 * (rate-limiter-flexible) consulted before each request via PlatformClient.beforeRequest.
 * A 429 from the platform blocks the bucket for its Retry-After, which slows every replica
 * at once; the daemon also pauses its apply queue with BullMQ's worker.rateLimit.
 */
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { sleep } from '../platform/retry.ts';
import type { RedisClient } from './redis.ts';

export interface GlobalRateLimiter {
  /** Resolves when this process may send one more request. */
  acquire(signal?: AbortSignal): Promise<void>;
  /** The platform said 429: nobody sends for `ms`. */
  backOff(ms: number): Promise<void>;
  /** Seconds spent waiting so far (for metrics). */
  readonly waitedSeconds: number;
}

export function createGlobalRateLimiter(redis: RedisClient, key: string, requestsPerSecond: number): GlobalRateLimiter {
  let waited = 0;
  if (requestsPerSecond <= 0) {
    const blockedUntil = { at: 0 };
    return {
      async acquire(signal) {
        const wait = blockedUntil.at - Date.now();
        if (wait > 0) {
          waited += wait / 1000;
          await sleep(wait, signal);
        }
      },
      async backOff(ms) {
        blockedUntil.at = Math.max(blockedUntil.at, Date.now() + ms);
      },
      get waitedSeconds() {
        return waited;
      },
    };
  }
  const limiter = new RateLimiterRedis({
    storeClient: redis,
    keyPrefix: key,
    points: Math.max(1, Math.floor(requestsPerSecond)),
    duration: 1,
  });
  return {
    async acquire(signal) {
      for (;;) {
        try {
          await limiter.consume('platform', 1);
          return;
        } catch (e) {
          if (!(e instanceof RateLimiterRes)) throw e;
          const ms = Math.max(5, e.msBeforeNext);
          waited += ms / 1000;
          await sleep(ms, signal);
        }
      }
    },
    async backOff(ms) {
      await limiter.block('platform', Math.max(1, Math.ceil(ms / 1000)));
    },
    get waitedSeconds() {
      return waited;
    },
  };
}
