/**
 * The audit state in Redis: a hash for the cursor, a sorted set for the overlap keys and a
 * lease key. A commit ends in one Lua script — check the lease, move the cursor forward
 * only, add keys, prune old ones — so a crash or a lost lease never leaves half a commit.
 * A commit of many keys first adds them in bounded slices (each checks the lease); only the
 * final script moves the cursor and prunes, so a crash between slices leaves the previous
 * commit's cursor and overlap keys intact, plus keys of events that were in fact delivered.
 * Each slice carries the window digests of its own keys (the final script the rest), so a
 * key is in the dedupe set only together with its share of the digests.
 */
import { randomUUID } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import { ErrorCodes, SyncError } from '../../errors.ts';
import { BAD_ROW_KEY_PREFIX } from '../dedupe-set.ts';
import { combineDigests, digestsOf } from '../digest/window-digest.ts';
import { DIGEST_LUA, digestArg, digestStateFromHash } from './redis-digest.ts';
import { auditRedisKeys, type AuditRedisKeys } from './redis-keys.ts';
import type { AuditState, AuditStateStore, CommitUpdate } from './store.ts';

const COMMIT = `${DIGEST_LUA}
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return redis.error_reply('LEASE_LOST') end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
local cur = redis.call('HGET', KEYS[2], 'cursorMs')
if (not cur) or tonumber(ARGV[3]) > tonumber(cur) then redis.call('HSET', KEYS[2], 'cursorMs', ARGV[3]) end
redis.call('HSET', KEYS[2], 'updatedAtMs', ARGV[5])
if ARGV[6] ~= '' then redis.call('HSET', KEYS[2], 'columns', ARGV[6]) end
if ARGV[7] == '-' then redis.call('HDEL', KEYS[2], 'backfill') elseif ARGV[7] ~= '' then redis.call('HSET', KEYS[2], 'backfill', ARGV[7]) end
apply_digests(KEYS[4], ARGV[8])
for i = 9, #ARGV, 2 do redis.call('ZADD', KEYS[3], ARGV[i], ARGV[i + 1]) end
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', '(' .. ARGV[4])
return 1
`;

/** A slice of a large commit's keys: added only, with their digests (no cursor, no prune, no other state change). */
const ADD_KEYS = `${DIGEST_LUA}
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return redis.error_reply('LEASE_LOST') end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
apply_digests(KEYS[3], ARGV[3])
for i = 4, #ARGV, 2 do redis.call('ZADD', KEYS[2], ARGV[i], ARGV[i + 1]) end
return 1
`;

const RENEW = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0`;
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

/** Keys added per script call: keeps one call's argument list (and its blocking time) bounded. */
const MAX_KEYS_PER_CALL = 5000;

export interface RedisStateOptions {
  /** Lease lifetime; renewed on every commit and every third of it. Milliseconds. */
  leaseMs?: number;
}

export class RedisAuditStateStore implements AuditStateStore {
  readonly describe: string;
  private readonly redis: Redis | Cluster;
  private readonly keys: AuditRedisKeys;
  private readonly leaseMs: number;
  private token: string | undefined;
  private renewTimer: NodeJS.Timeout | undefined;

  constructor(redis: Redis | Cluster, keyPrefix: string, tenant: string, opts: RedisStateOptions = {}) {
    this.redis = redis;
    this.keys = auditRedisKeys(keyPrefix, tenant);
    this.leaseMs = opts.leaseMs ?? 60_000; // ms
    this.describe = `redis:${this.keys.state}`;
  }

  async acquire(owner: string): Promise<void> {
    const token = `${owner}:${randomUUID()}`;
    const ok = await this.redis.set(this.keys.lock, token, 'PX', this.leaseMs, 'NX');
    if (ok !== 'OK') {
      const holder = await this.redis.get(this.keys.lock);
      throw new SyncError(
        ErrorCodes.CONFLICT,
        'conflict',
        `another audit export holds the lease ${this.keys.lock} (${holder?.split(':')[0] ?? 'unknown'}); it expires ${Math.round(this.leaseMs / 1000)} s after that run stops`,
      );
    }
    this.token = token;
    this.renewTimer = setInterval(
      () => {
        void this.redis.eval(RENEW, 1, this.keys.lock, token, this.leaseMs).catch(() => undefined);
      },
      Math.max(1000, Math.floor(this.leaseMs / 3)),
    );
    this.renewTimer.unref();
  }

  async release(): Promise<void> {
    if (this.renewTimer) clearInterval(this.renewTimer);
    this.renewTimer = undefined;
    const token = this.token;
    this.token = undefined;
    if (token) await this.redis.eval(RELEASE, 1, this.keys.lock, token);
  }

  async load(): Promise<AuditState> {
    const [hash, members, digests] = await Promise.all([
      this.redis.hgetall(this.keys.state),
      this.redis.zrange(this.keys.dedupe, 0, '-1', 'WITHSCORES') as Promise<unknown[]>,
      this.redis.hgetall(this.keys.digests),
    ]);
    const dedupe: Array<[string, number]> = [];
    // Flat [member, score, …] (legacy reply mapping) or [[member, score], …] (resp3 mapping).
    if (Array.isArray(members[0])) for (const [m, sc] of members as Array<[string, number]>) dedupe.push([m, Number(sc)]);
    else for (let i = 0; i + 1 < members.length; i += 2) dedupe.push([String(members[i]), Number(members[i + 1])]);
    const num = (v: string | undefined): number | null => (v === undefined || v === '' ? null : Number(v));
    return {
      cursorMs: num(hash['cursorMs']),
      dedupe,
      columns: hash['columns'] ? (JSON.parse(hash['columns']) as string[]) : null,
      backfill: hash['backfill'] ? (JSON.parse(hash['backfill']) as AuditState['backfill']) : null,
      updatedAtMs: num(hash['updatedAtMs']),
      digests: digestStateFromHash(digests),
    };
  }

  async commit(u: CommitUpdate): Promise<void> {
    if (!this.token) throw new SyncError(ErrorCodes.CONFLICT, 'fatal', 'audit state commit without the run lease');
    let added = u.added;
    let digests = u.digests;
    while (added.length > MAX_KEYS_PER_CALL) {
      const keys = added.slice(0, MAX_KEYS_PER_CALL);
      // The slice's own share of the digests goes with it; the final script adds the rest.
      // A reset goes with the first script, or it would drop what the slices before it added.
      const share = digests
        ? {
            windowMs: digests.windowMs,
            ...(digests.reset ? { reset: digests.reset } : {}),
            add: digestsOf(keys, digests.windowMs, BAD_ROW_KEY_PREFIX),
          }
        : undefined;
      const slice: (string | number)[] = [
        this.token,
        this.leaseMs,
        share ? digestArg({ ...share, pruneBeforeMs: Number.MIN_SAFE_INTEGER }) : '',
      ];
      for (const [k, ts] of keys) slice.push(ts, k);
      await this.eval(ADD_KEYS, [this.keys.lock, this.keys.dedupe, this.keys.digests], slice);
      if (digests && share) {
        const { reset: _done, ...rest } = digests;
        digests = { ...rest, add: combineDigests(digests.add, share.add, -1) };
      }
      added = added.slice(MAX_KEYS_PER_CALL);
    }
    const args: (string | number)[] = [
      this.token,
      this.leaseMs,
      u.cursorMs,
      u.pruneBeforeMs,
      u.nowMs,
      u.columns ? JSON.stringify(u.columns) : '',
      u.backfill === null ? '-' : u.backfill === undefined ? '' : JSON.stringify(u.backfill),
      digestArg(digests),
    ];
    for (const [k, ts] of added) args.push(ts, k);
    await this.eval(COMMIT, [this.keys.lock, this.keys.state, this.keys.dedupe, this.keys.digests], args);
  }

  private async eval(script: string, keys: string[], args: (string | number)[]): Promise<void> {
    try {
      await this.redis.eval(script, keys.length, ...keys, ...args);
    } catch (e) {
      if (String((e as Error).message).includes('LEASE_LOST')) {
        throw new SyncError(
          ErrorCodes.CONFLICT,
          'fatal',
          `audit run lease ${this.keys.lock} was lost (expired or taken by another run); stopping without committing`,
        );
      }
      throw new SyncError(ErrorCodes.TRANSIENT, 'transient', `audit state commit to Redis failed: ${(e as Error).message}`, { cause: e });
    }
  }

  async close(): Promise<void> {
    await this.release();
  }
}
