/**
 * Dead letters in Redis: one list of JSON entries per sink, plus a set of the sink names.
 * A replay moves a batch atomically to `<sink>:replaying`, hands it to the handler, then in
 * one transaction drops the batch and pushes back what failed again. A replay that dies
 * leaves its batch in `:replaying`, and the next replay takes it first (at-least-once).
 */
import type { Cluster, Redis } from 'ioredis';
import { auditRedisKeys, type AuditRedisKeys } from '../state/redis-keys.ts';
import type { DeadLetter, DeadLetterStore, ReplayHandler } from './store.ts';

const TAKE = `
local items = redis.call('LRANGE', KEYS[1], 0, tonumber(ARGV[1]) - 1)
if #items > 0 then
  redis.call('LTRIM', KEYS[1], #items, -1)
  redis.call('RPUSH', KEYS[2], unpack(items))
end
return items
`;

export class RedisDeadLetterStore implements DeadLetterStore {
  readonly describe: string;
  private readonly redis: Redis | Cluster;
  private readonly keys: AuditRedisKeys;

  constructor(redis: Redis | Cluster, keyPrefix: string, tenant: string) {
    this.redis = redis;
    this.keys = auditRedisKeys(keyPrefix, tenant);
    this.describe = `redis:${this.keys.deadLetters('*')}`;
  }

  async add(entries: readonly DeadLetter[]): Promise<void> {
    if (entries.length === 0) return;
    const multi = this.redis.multi();
    for (const e of entries) {
      multi.sadd(this.keys.deadLetterSinks, e.sink);
      multi.rpush(this.keys.deadLetters(e.sink), JSON.stringify(e));
    }
    const results = await multi.exec();
    const failed = results?.find(([err]) => err);
    if (!results || failed) throw failed?.[0] ?? new Error('dead-letter transaction aborted');
  }

  async counts(): Promise<Record<string, number>> {
    const sinks = await this.redis.smembers(this.keys.deadLetterSinks);
    const out: Record<string, number> = {};
    for (const sink of sinks.sort()) {
      const [a, b] = await Promise.all([
        this.redis.llen(this.keys.deadLetters(sink)),
        this.redis.llen(this.keys.deadLettersReplaying(sink)),
      ]);
      out[sink] = a + b;
    }
    return out;
  }

  async peek(sink: string, limit: number): Promise<DeadLetter[]> {
    if (limit <= 0) return [];
    const replaying = await this.redis.lrange(this.keys.deadLettersReplaying(sink), 0, limit - 1);
    const live = replaying.length < limit ? await this.redis.lrange(this.keys.deadLetters(sink), 0, limit - replaying.length - 1) : [];
    return [...replaying, ...live].map((s) => JSON.parse(s) as DeadLetter);
  }

  async drain(sink: string, batchSize: number, handler: ReplayHandler): Promise<{ taken: number; returned: number }> {
    const live = this.keys.deadLetters(sink);
    const replaying = this.keys.deadLettersReplaying(sink);
    let taken = 0;
    let returned = 0;
    // Bound the replay to what is there now, so entries that fail again are not retried in a loop.
    let budget = (await this.redis.llen(live)) + (await this.redis.llen(replaying));
    while (budget > 0) {
      const n = Math.min(batchSize, budget);
      let raw = await this.redis.lrange(replaying, 0, n - 1);
      if (raw.length === 0) raw = (await this.redis.eval(TAKE, 2, live, replaying, n)) as string[];
      if (raw.length === 0) break;
      budget -= raw.length;
      taken += raw.length;
      const failed = await handler(raw.map((s) => JSON.parse(s) as DeadLetter));
      returned += failed.length;
      const multi = this.redis.multi().ltrim(replaying, raw.length, -1);
      if (failed.length > 0) multi.rpush(live, ...failed.map((e) => JSON.stringify(e)));
      await multi.exec();
    }
    return { taken, returned };
  }

  async close(): Promise<void> {}
}
