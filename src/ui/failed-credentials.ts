/**
 * Failed credentials on the status page (login, bearer token, action token), rate-limited per
 * peer address and overall: after too many failures further attempts are refused (429 with
 * Retry-After) before the token is even compared. In memory, per replica: the tokens are long
 * random strings, so the limit is against noise and log floods more than against guessing.
 */
import { RateLimiterMemory } from 'rate-limiter-flexible';

/** Failures allowed per peer address in one window. */
export const FAILURES_PER_PEER = 10;
/** Failures allowed from all peers together in one window. */
export const FAILURES_OVERALL = 100;
const WINDOW_SECONDS = 15 * 60;
const OVERALL = '*';

export class FailedCredentials {
  private readonly perPeer = new RateLimiterMemory({ points: FAILURES_PER_PEER, duration: WINDOW_SECONDS });
  private readonly overall = new RateLimiterMemory({ points: FAILURES_OVERALL, duration: WINDOW_SECONDS });

  /** Milliseconds until `peer` may try again; 0 when it may now. */
  async blockedForMs(peer: string): Promise<number> {
    const [p, o] = await Promise.all([this.perPeer.get(peer), this.overall.get(OVERALL)]);
    let ms = 0;
    if (p && p.consumedPoints >= FAILURES_PER_PEER) ms = Math.max(ms, p.msBeforeNext);
    if (o && o.consumedPoints >= FAILURES_OVERALL) ms = Math.max(ms, o.msBeforeNext);
    return ms;
  }

  async failed(peer: string): Promise<void> {
    // consume rejects once the points are used up: that is the state blockedForMs reads.
    await Promise.allSettled([this.perPeer.consume(peer), this.overall.consume(OVERALL)]);
  }

  async succeeded(peer: string): Promise<void> {
    await this.perPeer.delete(peer);
  }
}
