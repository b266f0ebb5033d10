/**
 * The run lease of one tenant, with a fencing token: at most one reconcile of a tenant
 * applies changes at any moment, whatever the number of replicas and however long one of
 * them stalls (a blocked event loop, a paused VM, a network partition).
 *
 * Acquiring the lease issues a new token (Redis INCR on a counter that only ever grows) and
 * stores it in the lease. The holder renews the lease on a timer; every apply phase and every
 * fanned-out chunk checks, in Redis, that the lease still carries its token before it writes.
 * A holder whose lease expired or was taken over (a stalled job recovered by another replica
 * gets a newer token) finds a different token or none, stops without writing, and its run
 * ends as "lease lost". Renewal failures are not swallowed: a lease that could not be
 * renewed before it expires is lost, and the run's AbortSignal fires.
 */
import { ErrorCodes, SyncError } from '../errors.ts';
import type { RedisClient } from './redis.ts';

/**
 * The lease is a string `<token> <owner>` with a TTL (the same key as before tokens existed,
 * where the value was the owner alone: a replica of an earlier version and one of this version
 * exclude each other during a rolling upgrade).
 *
 * KEYS[1] lease, KEYS[2] token counter; ARGV owner, ttl ms. Free, or held by the same owner
 * (the same job recovered after its replica stalled or died): take it with a new token, which
 * fences the earlier holder out. Returns the token, or false when another owner holds it.
 */
const ACQUIRE_LUA = `
local v = redis.call('get', KEYS[1])
if v then
  local owner = string.match(v, '^%d+ (.*)$') or v
  if owner ~= ARGV[1] then return false end
end
local fence = redis.call('incr', KEYS[2])
redis.call('set', KEYS[1], fence .. ' ' .. ARGV[1], 'PX', ARGV[2])
return fence`;
/** KEYS[1] lease; ARGV token [, ttl ms]. 1 held (renewed when a ttl is given), 0 another token or owner holds it, -1 no lease at all. */
const CHECK_LUA = `
local v = redis.call('get', KEYS[1])
if not v then return -1 end
if string.match(v, '^(%d+) ') ~= ARGV[1] then return 0 end
if ARGV[2] then redis.call('pexpire', KEYS[1], ARGV[2]) end
return 1`;
const RELEASE_LUA = `local v = redis.call('get', KEYS[1]) if v and string.match(v, '^(%d+) ') == ARGV[1] then return redis.call('del', KEYS[1]) end return 0`;

export type FenceState = 'held' | 'taken' | 'gone';

/** Does the lease at `leaseKey` still carry `fence`? (One atomic read; renews it when `renewMs` is given.) */
export async function checkFence(redis: RedisClient, leaseKey: string, fence: number, renewMs?: number): Promise<FenceState> {
  const args = renewMs === undefined ? [String(fence)] : [String(fence), String(renewMs)];
  const r = Number(await redis.eval(CHECK_LUA, 1, leaseKey, ...args));
  return r === 1 ? 'held' : r === 0 ? 'taken' : 'gone';
}

/** The stable error of a run (or chunk) that no longer holds its lease. */
export function leaseLostError(state: Exclude<FenceState, 'held'> | 'not-renewed', fence: number): SyncError {
  const why =
    state === 'taken'
      ? 'another replica took the run over (this replica stalled past the lease, and its job was recovered)'
      : state === 'gone'
        ? 'the lease is gone from Redis (it expired while this replica stalled, or Redis lost its data)'
        : 'the lease could not be renewed before it expired (Redis unreachable or this replica stalled)';
  return new SyncError(ErrorCodes.LEASE_LOST, 'transient', `run lease lost (token ${fence}): ${why}; nothing more is applied by this run`);
}

export interface RunLease {
  /** The fencing token of this holder. */
  readonly fence: number;
  /** Aborted (with the E_LEASE_LOST error as reason) as soon as the lease is known to be lost. */
  readonly signal: AbortSignal;
  /** Throws E_LEASE_LOST unless Redis still holds this lease with this token (and renews it). */
  assertHeld(): Promise<void>;
  /** Stops renewing and deletes the lease if it is still ours. */
  release(): Promise<void>;
}

/**
 * Takes the lease for `owner` (e.g. `job:<id>`); undefined when another owner holds it. The
 * lease lives `ttlMs` and is renewed every third of it; when a renewal finds another token or
 * no lease, or no renewal succeeded for `ttlMs`, `signal` aborts.
 */
export async function acquireRunLease(
  redis: RedisClient,
  leaseKey: string,
  fenceKey: string,
  owner: string,
  ttlMs: number,
): Promise<RunLease | undefined> {
  const sentAt = Date.now();
  const got = await redis.eval(ACQUIRE_LUA, 2, leaseKey, fenceKey, owner, String(ttlMs));
  if (got === null) return undefined;
  const fence = Number(got);
  const ctl = new AbortController();
  // Counted from when the request was sent: the lease may have started expiring then.
  let validUntil = sentAt + ttlMs;
  const lose = (state: Exclude<FenceState, 'held'> | 'not-renewed'): void => {
    if (!ctl.signal.aborted) ctl.abort(leaseLostError(state, fence));
    clearInterval(timer);
  };
  const renew = async (): Promise<void> => {
    if (Date.now() >= validUntil) return lose('not-renewed');
    const at = Date.now();
    try {
      const state = await checkFence(redis, leaseKey, fence, ttlMs);
      if (state !== 'held') return lose(state);
      validUntil = Math.max(validUntil, at + ttlMs);
    } catch {
      // A failed renewal is retried on the next tick; the deadline above decides when the lease is lost.
    }
  };
  const timer = setInterval(() => void renew(), Math.max(50, Math.floor(ttlMs / 3)));
  timer.unref();
  return {
    fence,
    signal: ctl.signal,
    async assertHeld() {
      if (ctl.signal.aborted) throw ctl.signal.reason;
      if (Date.now() >= validUntil) {
        lose('not-renewed');
        throw ctl.signal.reason;
      }
      const at = Date.now();
      const state = await checkFence(redis, leaseKey, fence, ttlMs);
      if (state !== 'held') {
        lose(state);
        throw ctl.signal.reason;
      }
      validUntil = Math.max(validUntil, at + ttlMs);
    },
    async release() {
      clearInterval(timer);
      await redis.eval(RELEASE_LUA, 1, leaseKey, String(fence));
    },
  };
}
