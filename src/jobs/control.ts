/**
 * A short-lived connection for operator commands (trigger, resume, approve-deletes, status):
 * the same Redis keys and queues as the daemon, without workers.
 */
import { Queue } from 'bullmq';
import type { LoadedConfig } from '../config/load.ts';
import { ConfigError } from '../errors.ts';
import { QUEUE_NAMES } from './keys.ts';
import { redisFactory, type RedisClient } from './redis.ts';
import { daemonStatus } from './status.ts';
import { TenantState } from './tenant-state.ts';

export interface Control {
  redis: RedisClient;
  keyPrefix: string;
  queues: { reconcile: Queue; audit: Queue; apply: Queue };
  tenant(id: string): { state: TenantState; loaded: LoadedConfig };
  status(): ReturnType<typeof daemonStatus>;
  close(): Promise<void>;
}

export function openControl(all: LoadedConfig[]): Control {
  const first = all[0];
  if (!first?.config.redis) throw new ConfigError('this command needs Redis', ['redis.url: set it to the Redis the daemon uses']);
  const factory = redisFactory(first);
  const redis = factory.create('control');
  const queueConn = factory.create('control-queues');
  const opts = { connection: queueConn, prefix: factory.bullPrefix };
  const queues = {
    reconcile: new Queue(QUEUE_NAMES.reconcile, opts),
    audit: new Queue(QUEUE_NAMES.audit, opts),
    apply: new Queue(QUEUE_NAMES.apply, opts),
  };
  // The command's own Redis calls fail with the error (and the CLI reports it once): the
  // emitters' copies of it are not printed again as raw stack traces.
  const ignore = (): void => undefined;
  for (const c of [redis, queueConn]) c.on('error', ignore);
  for (const q of Object.values(queues)) q.on('error', ignore);
  const byId = new Map(all.map((l) => [l.config.tenant, l]));
  return {
    redis,
    keyPrefix: factory.keyPrefix,
    queues,
    tenant(id) {
      const loaded = byId.get(id);
      if (!loaded)
        throw new ConfigError(`unknown tenant ${JSON.stringify(id)}`, [`--tenant: expected one of ${[...byId.keys()].join(', ')}`]);
      return { state: new TenantState(redis, factory.keyPrefix, id), loaded };
    },
    status: () =>
      daemonStatus({
        tenants: new Map(all.map((l) => [l.config.tenant, { id: l.config.tenant, loaded: l }])),
        queues,
        redis,
        keyPrefix: factory.keyPrefix,
      }),
    async close() {
      await Promise.all(Object.values(queues).map((q) => q.close().catch(() => undefined)));
      await Promise.all([redis.quit().catch(() => redis.disconnect()), queueConn.quit().catch(() => queueConn.disconnect())]);
    },
  };
}
