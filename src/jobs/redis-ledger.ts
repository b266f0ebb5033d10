/**
 * The ownership ledger in Redis, shared by every replica. Planning loads it whole into an
 * in-memory Ledger; fanned-out apply tasks write through per entry (HSET), so concurrent
 * child jobs on different replicas never overwrite each other's records.
 */
import type { LedgerData, LedgerEntry, LedgerStore, LedgerWriter, ObjectKind } from '../reconcile/ledger.ts';
import type { RedisClient } from './redis.ts';
import { tenantKeys, type TenantKeys } from './keys.ts';

export class RedisLedger implements LedgerStore, LedgerWriter {
  readonly describe: string;
  private readonly redis: RedisClient;
  private readonly keys: TenantKeys;

  constructor(redis: RedisClient, keyPrefix: string, tenant: string) {
    this.redis = redis;
    this.keys = tenantKeys(keyPrefix, tenant);
    this.describe = `redis:${this.keys.ledgerUsers}`;
  }

  private entries(kind: ObjectKind): string {
    return kind === 'user' ? this.keys.ledgerUsers : this.keys.ledgerGroups;
  }

  private byExt(kind: ObjectKind): string {
    return kind === 'user' ? this.keys.ledgerUsersByExt : this.keys.ledgerGroupsByExt;
  }

  async load(): Promise<LedgerData | undefined> {
    const [users, groups, pending] = await Promise.all([
      this.redis.hgetall(this.keys.ledgerUsers),
      this.redis.hgetall(this.keys.ledgerGroups),
      this.redis.smembers(this.keys.ledgerPending),
    ]);
    const parse = (h: Record<string, string>): Record<string, LedgerEntry> =>
      Object.fromEntries(Object.entries(h).map(([id, json]) => [id, JSON.parse(json) as LedgerEntry]));
    return { version: 1, users: parse(users), groups: parse(groups), pending };
  }

  /** Whole-ledger write (after planning pruned it, or after a one-process apply). */
  async save(data: LedgerData): Promise<void> {
    const tx = this.redis.multi();
    for (const kind of ['user', 'group'] as const) {
      const map = kind === 'user' ? data.users : data.groups;
      tx.del(this.entries(kind), this.byExt(kind));
      const flat = Object.entries(map);
      if (flat.length > 0) {
        tx.hset(this.entries(kind), Object.fromEntries(flat.map(([id, e]) => [id, JSON.stringify(e)])));
        tx.hset(this.byExt(kind), Object.fromEntries(flat.map(([id, e]) => [e.externalId, id])));
      }
    }
    tx.del(this.keys.ledgerPending);
    if (data.pending.length > 0) tx.sadd(this.keys.ledgerPending, ...data.pending);
    await tx.exec();
  }

  /** Entries per kind and pending creates, without loading them. */
  async counts(): Promise<{ users: number; groups: number; pending: number }> {
    const [users, groups, pending] = await Promise.all([this.redis.hlen(this.keys.ledgerUsers), this.redis.hlen(this.keys.ledgerGroups), this.redis.scard(this.keys.ledgerPending)]);
    return { users, groups, pending };
  }

  /**
   * Moving from one-shot to the daemon: writes `data` (the state dir's ledger) when the Redis
   * ledger is empty and no import happened before; true when it did. Never merges into or
   * overwrites a ledger the daemon already keeps.
   */
  async importIfEmpty(data: LedgerData): Promise<boolean> {
    const c = await this.counts();
    if (c.users + c.groups + c.pending > 0) return false;
    if ((await this.redis.set(this.keys.ledgerImported, new Date().toISOString(), 'NX')) !== 'OK') return false;
    await this.save(data);
    return true;
  }

  async markPending(kind: ObjectKind, externalIds: string[]): Promise<void> {
    if (externalIds.length > 0) await this.redis.sadd(this.keys.ledgerPending, ...externalIds.map((x) => `${kind}:${x}`));
  }

  async record(kind: ObjectKind, id: string, externalId: string): Promise<void> {
    const prev = await this.redis.hget(this.entries(kind), id);
    const entry: LedgerEntry = { ...(prev ? (JSON.parse(prev) as LedgerEntry) : {}), externalId };
    await this.redis
      .multi()
      .hset(this.entries(kind), id, JSON.stringify(entry))
      .hset(this.byExt(kind), externalId, id)
      .srem(this.keys.ledgerPending, `${kind}:${externalId}`)
      .exec();
  }

  async forget(kind: ObjectKind, id: string): Promise<void> {
    const prev = await this.redis.hget(this.entries(kind), id);
    const tx = this.redis.multi().hdel(this.entries(kind), id);
    if (prev) tx.hdel(this.byExt(kind), (JSON.parse(prev) as LedgerEntry).externalId);
    await tx.exec();
  }

  /** Forget objects that no longer exist on the platform (pruned while planning). */
  async forgetMany(kind: ObjectKind, ids: string[]): Promise<void> {
    for (const id of ids) await this.forget(kind, id);
  }

  async setDeactivated(id: string, at: number | undefined): Promise<void> {
    const prev = await this.redis.hget(this.keys.ledgerUsers, id);
    if (!prev) return;
    const entry: LedgerEntry = { externalId: (JSON.parse(prev) as LedgerEntry).externalId };
    if (at !== undefined) entry.deactivatedAt = at;
    await this.redis.hset(this.keys.ledgerUsers, id, JSON.stringify(entry));
  }

  async has(kind: ObjectKind, id: string): Promise<boolean> {
    return (await this.redis.hexists(this.entries(kind), id)) === 1;
  }

  async idFor(kind: ObjectKind, externalId: string): Promise<string | undefined> {
    return (await this.redis.hget(this.byExt(kind), externalId)) ?? undefined;
  }

  /** Member removals the server acknowledged for a group (see LedgerEntry.removed). */
  async noteMemberRemovals(groupId: string, ids: string[], at: number): Promise<void> {
    const prev = await this.redis.hget(this.keys.ledgerGroups, groupId);
    if (!prev) return;
    const { removed, ...rest } = JSON.parse(prev) as LedgerEntry;
    if (ids.length === 0 && removed === undefined) return;
    await this.redis.hset(this.keys.ledgerGroups, groupId, JSON.stringify(ids.length > 0 ? { ...rest, removed: { at, ids } } : rest));
  }
}
