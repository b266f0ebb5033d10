/**
 * What the change stream of a tenant keeps in Redis, shared by every replica: its cursor and
 * state (shown by /status), and the rolling window and hold of the deletion guard over changes
 * (reconcile/changes/burst-guard.ts). A held burst is also recorded as held deletes, so
 * `approve-deletes`, /status and the status page treat it as any held plan.
 */
import type { BurstCounts, BurstHold, BurstStore } from '../reconcile/changes/burst-guard.ts';
import type { CursorStore } from '../reconcile/changes/change-loop.ts';
import { tenantKeys, type TenantKeys } from './keys.ts';
import type { RedisClient } from './redis.ts';
import { TenantState } from './tenant-state.ts';

export class RedisBurstStore implements BurstStore {
  private readonly keys: TenantKeys;
  private readonly redis: RedisClient;
  private readonly state: TenantState;

  constructor(redis: RedisClient, keyPrefix: string, tenant: string) {
    this.redis = redis;
    this.keys = tenantKeys(keyPrefix, tenant);
    this.state = new TenantState(redis, keyPrefix, tenant);
  }

  async appliedSince(sinceMs: number): Promise<BurstCounts> {
    await this.redis.zremrangebyscore(this.keys.changeBurstWindow, '-inf', `(${sinceMs}`);
    const members = await this.redis.zrangebyscore(this.keys.changeBurstWindow, sinceMs, '+inf');
    const sum = { destructive: 0, memberRemovals: 0 };
    for (const m of members) {
      const [, d, r] = m.split(':');
      sum.destructive += Number(d ?? 0);
      sum.memberRemovals += Number(r ?? 0);
    }
    return sum;
  }

  async recordApplied(at: number, counts: BurstCounts): Promise<void> {
    if (counts.destructive === 0 && counts.memberRemovals === 0) return;
    // Unique member per batch: `<at>-<random>:<destructive>:<memberRemovals>`.
    const member = `${at.toString(36)}${Math.random().toString(36).slice(2, 8)}:${counts.destructive}:${counts.memberRemovals}`;
    await this.redis
      .multi()
      .zadd(this.keys.changeBurstWindow, at, member)
      .pexpire(this.keys.changeBurstWindow, 7 * 86_400_000)
      .exec();
  }

  async hold(): Promise<BurstHold | undefined> {
    const v = await this.redis.get(this.keys.changeBurstHold);
    return v === null ? undefined : (JSON.parse(v) as BurstHold);
  }

  async setHold(hold: BurstHold): Promise<void> {
    await this.redis.set(this.keys.changeBurstHold, JSON.stringify(hold));
    const held = await this.state.heldDeletes();
    // A held full plan already says what is held (and an approval is bound to it).
    if (held !== undefined && !held.runId.startsWith('changes:')) return;
    await this.state.setHeldDeletes({
      count: hold.destructive,
      memberRemovals: hold.memberRemovals,
      reasons: hold.reasons,
      at: hold.at,
      runId: `changes:${hold.at.toString(36)}`,
    });
  }

  async clear(): Promise<void> {
    await this.redis.del(this.keys.changeBurstHold, this.keys.changeBurstWindow);
  }
}

/** The stream's state as /status shows it (times in epoch ms). */
export interface ChangeStreamState {
  cursor?: string;
  cursorSavedAt?: number;
  lastPollAt?: number;
  lastBatchAt?: number;
  lastResult?: string;
  owner?: string;
  mechanism?: string;
  /** Why the stream last asked for a full reconcile: a stable code (never a name). */
  lastDeferCode?: string;
  lastDeferAt?: number;
  lastError?: string;
}

export class RedisChangeState implements CursorStore {
  private readonly key: string;
  private readonly redis: RedisClient;

  constructor(redis: RedisClient, keyPrefix: string, tenant: string) {
    this.redis = redis;
    this.key = tenantKeys(keyPrefix, tenant).changeStream;
  }

  async load(): Promise<string | undefined> {
    return (await this.redis.hget(this.key, 'cursor')) ?? undefined;
  }

  async save(cursor: string): Promise<void> {
    await this.redis.hset(this.key, { cursor, cursorSavedAt: String(Date.now()) });
  }

  async note(fields: Partial<Record<keyof ChangeStreamState, string | number>>): Promise<void> {
    const entries = Object.entries(fields).filter(([, v]) => v !== undefined);
    if (entries.length > 0) await this.redis.hset(this.key, Object.fromEntries(entries.map(([k, v]) => [k, String(v)])));
  }

  async read(): Promise<ChangeStreamState> {
    const h = await this.redis.hgetall(this.key);
    const num = (k: string): number | undefined => (h[k] !== undefined ? Number(h[k]) : undefined);
    const out: ChangeStreamState = {};
    for (const k of ['cursor', 'lastResult', 'owner', 'mechanism', 'lastDeferCode', 'lastError'] as const) if (h[k] !== undefined) out[k] = h[k];
    for (const k of ['cursorSavedAt', 'lastPollAt', 'lastBatchAt', 'lastDeferAt'] as const) {
      const v = num(k);
      if (v !== undefined) out[k] = v;
    }
    return out;
  }
}
