/**
 * The daemon's provisioning log: one Redis stream per tenant, capped by entry count on every
 * append (exact MAXLEN) and by age (MINID), one JSON field per entry. The stream id is the
 * record id, so ids are ordered across replicas. The sink-delivery position is a string key.
 */
import type { Redis, Cluster } from 'ioredis';
import { matches, type LogQuery } from './query.ts';
import type { NewRecord, ProvisioningRecord } from './record.ts';
import type { ProvisioningLogStore, Retention } from './store.ts';

type RedisLike = Redis | Cluster;

/** Every key of the provisioning log of a tenant (hash-tagged like the rest of the tenant's keys). */
export function provisioningLogKeys(
  keyPrefix: string,
  tenant: string,
): { stream: string; delivered: string; heldDigest: string; details(runId: string): string } {
  const base = `${keyPrefix}:{${tenant}}:provisioning-log`;
  return {
    stream: base,
    delivered: `${base}:delivered`,
    heldDigest: `${base}:held-digest`,
    details: (runId) => `${base}:run:${runId}:details`,
  };
}

const PAGE = 500;

function parseEntry(id: string, fields: string[]): ProvisioningRecord | undefined {
  const i = fields.indexOf('r');
  if (i < 0 || fields[i + 1] === undefined) return undefined;
  try {
    return { ...(JSON.parse(fields[i + 1]!) as NewRecord), id };
  } catch {
    return undefined;
  }
}

export class RedisProvisioningLogStore implements ProvisioningLogStore {
  readonly describe: string;
  private readonly keys: ReturnType<typeof provisioningLogKeys>;
  private readonly redis: RedisLike;
  private readonly retention: Retention;
  private readonly now: () => number;

  constructor(redis: RedisLike, keyPrefix: string, tenant: string, retention: Retention, now: () => number = Date.now) {
    this.redis = redis;
    this.retention = retention;
    this.now = now;
    this.keys = provisioningLogKeys(keyPrefix, tenant);
    this.describe = `redis stream ${this.keys.stream}`;
  }

  async append(records: readonly NewRecord[]): Promise<void> {
    if (records.length === 0) return;
    const tx = this.redis.multi();
    for (const r of records) tx.xadd(this.keys.stream, 'MAXLEN', String(this.retention.maxEntries), '*', 'r', JSON.stringify(r));
    tx.xtrim(this.keys.stream, 'MINID', `${this.now() - this.retention.maxAgeMs}-0`);
    const res = await tx.exec();
    const failed = res?.find(([e]) => e !== null);
    if (failed) throw failed[0];
  }

  async trim(): Promise<void> {
    await this.redis.xtrim(this.keys.stream, 'MAXLEN', String(this.retention.maxEntries));
    await this.redis.xtrim(this.keys.stream, 'MINID', `${this.now() - this.retention.maxAgeMs}-0`);
  }

  async query(q: LogQuery): Promise<ProvisioningRecord[]> {
    const out: ProvisioningRecord[] = [];
    const start = q.sinceMs !== undefined ? `${Math.max(0, Math.floor(q.sinceMs))}-0` : '-';
    let end = '+';
    for (;;) {
      const page = await this.redis.xrevrange(this.keys.stream, end, start, 'COUNT', PAGE);
      for (const [id, fields] of page) {
        const r = parseEntry(id, fields);
        if (r && matches(r, q)) out.push(r);
        if (out.length >= q.limit) return out;
      }
      if (page.length < PAGE) return out;
      end = `(${page[page.length - 1]![0]}`;
    }
  }

  async after(afterId: string | null, limit: number): Promise<ProvisioningRecord[]> {
    const page = await this.redis.xrange(this.keys.stream, afterId === null ? '-' : `(${afterId}`, '+', 'COUNT', limit);
    return page.flatMap(([id, fields]) => parseEntry(id, fields) ?? []);
  }

  async deliveredUpTo(): Promise<string | null> {
    return this.redis.get(this.keys.delivered);
  }

  async setDeliveredUpTo(id: string): Promise<void> {
    await this.redis.set(this.keys.delivered, id);
  }

  async close(): Promise<void> {}
}
