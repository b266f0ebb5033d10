/**
 * The ownership ledger in Redis, shared by every replica. Planning loads it whole into an
 * in-memory Ledger; fanned-out apply tasks write through per entry (HSET), so concurrent
 * child jobs on different replicas never overwrite each other's records.
 */
import type { LedgerData, LedgerEntry, LedgerStore, LedgerWriter, ObjectKind } from '../reconcile/ledger.ts';
import type { AttributeState, LedgerDefinition } from '../reconcile/attributes/ledger-section.ts';
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
    const [users, groups, pending, attrDefs, attrValues] = await Promise.all([
      this.redis.hgetall(this.keys.ledgerUsers),
      this.redis.hgetall(this.keys.ledgerGroups),
      this.redis.smembers(this.keys.ledgerPending),
      this.redis.hgetall(this.keys.ledgerAttributeDefinitions),
      this.redis.hgetall(this.keys.ledgerAttributeValues),
    ]);
    const parse = <T>(h: Record<string, string>): Record<string, T> =>
      Object.fromEntries(Object.entries(h).map(([id, json]) => [id, JSON.parse(json) as T]));
    const hasAttributes = Object.keys(attrDefs).length > 0 || Object.keys(attrValues).length > 0;
    return {
      version: 1,
      users: parse<LedgerEntry>(users),
      groups: parse<LedgerEntry>(groups),
      pending,
      ...(hasAttributes
        ? { attributes: { definitions: parse<LedgerDefinition>(attrDefs), values: parse<AttributeState>(attrValues) } }
        : {}),
    };
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
    // user attributes
    tx.del(this.keys.ledgerAttributeDefinitions, this.keys.ledgerAttributeValues);
    const defs = Object.entries(data.attributes?.definitions ?? {});
    const values = Object.entries(data.attributes?.values ?? {});
    if (defs.length > 0) tx.hset(this.keys.ledgerAttributeDefinitions, Object.fromEntries(defs.map(([k, v]) => [k, JSON.stringify(v)])));
    if (values.length > 0) tx.hset(this.keys.ledgerAttributeValues, Object.fromEntries(values.map(([k, v]) => [k, JSON.stringify(v)])));
    await tx.exec();
  }

  // ---- user attributes ----
  async recordAttributeDefinition(name: string, def: LedgerDefinition): Promise<void> {
    const prev = await this.attributeDefinition(name);
    const created = def.created || (prev?.id === def.id && prev.created);
    await this.redis.hset(this.keys.ledgerAttributeDefinitions, name, JSON.stringify({ id: def.id, created }));
  }

  async attributeDefinition(name: string): Promise<LedgerDefinition | undefined> {
    const raw = await this.redis.hget(this.keys.ledgerAttributeDefinitions, name);
    return raw ? (JSON.parse(raw) as LedgerDefinition) : undefined;
  }

  async recordAttributeState(userId: string, state: AttributeState): Promise<void> {
    await this.redis.hset(this.keys.ledgerAttributeValues, userId, JSON.stringify(state));
  }

  async attributeState(userId: string): Promise<AttributeState | undefined> {
    const raw = await this.redis.hget(this.keys.ledgerAttributeValues, userId);
    return raw ? (JSON.parse(raw) as AttributeState) : undefined;
  }

  /** States read (or definitions forgotten) while planning, written through before apply. */
  async recordAttributePlanning(changes: {
    states: Array<[string, AttributeState]>;
    forgotten: string[];
    definitions: Array<[string, LedgerDefinition]>;
  }): Promise<void> {
    const tx = this.redis.multi();
    if (changes.states.length > 0)
      tx.hset(this.keys.ledgerAttributeValues, Object.fromEntries(changes.states.map(([id, st]) => [id, JSON.stringify(st)])));
    if (changes.forgotten.length > 0) tx.hdel(this.keys.ledgerAttributeDefinitions, ...changes.forgotten);
    if (changes.definitions.length > 0)
      tx.hset(this.keys.ledgerAttributeDefinitions, Object.fromEntries(changes.definitions.map(([name, d]) => [name, JSON.stringify(d)])));
    await tx.exec();
  }

  /** Entries per kind and pending creates, without loading them. */
  async counts(): Promise<{ users: number; groups: number; pending: number }> {
    const [users, groups, pending] = await Promise.all([
      this.redis.hlen(this.keys.ledgerUsers),
      this.redis.hlen(this.keys.ledgerGroups),
      this.redis.scard(this.keys.ledgerPending),
    ]);
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

  /** `ledger reassign`: the entry of `id` now belongs to `to` (its other fields kept), in one transaction. */
  async reassign(kind: ObjectKind, id: string, from: string, to: string): Promise<void> {
    const prev = await this.redis.hget(this.entries(kind), id);
    if (!prev) return;
    const entry: LedgerEntry = { ...(JSON.parse(prev) as LedgerEntry), externalId: to };
    await this.redis
      .multi()
      .hset(this.entries(kind), id, JSON.stringify(entry))
      .hdel(this.byExt(kind), from)
      .hset(this.byExt(kind), to, id)
      .exec();
  }

  async forget(kind: ObjectKind, id: string): Promise<void> {
    const prev = await this.redis.hget(this.entries(kind), id);
    const tx = this.redis.multi().hdel(this.entries(kind), id);
    if (prev) tx.hdel(this.byExt(kind), (JSON.parse(prev) as LedgerEntry).externalId);
    if (kind === 'user') tx.hdel(this.keys.ledgerAttributeValues, id);
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
