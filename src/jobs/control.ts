/**
 * A short-lived connection for operator commands (trigger, resume, approve-deletes, status):
 * the same Redis keys and queues as the daemon, without workers.
 */
import { Queue } from 'bullmq';
import type { LoadedConfig } from '../config/load.ts';
import { ConfigError } from '../errors.ts';
import { QUEUE_NAMES } from './keys.ts';
import { redisFactory, type RedisClient, type RedisFactory } from './redis.ts';
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
  const factory = factoryOf(all);
  return controlOver(all, factory, factory.create('control'), factory.create('control-queues'));
}

/**
 * The same for an operator command: fails within `redis.connectTimeoutSeconds` with
 * `E_REDIS_UNAVAILABLE` (naming the configured address) when Redis does not answer.
 */
export async function connectControl(all: LoadedConfig[]): Promise<Control> {
  const factory = factoryOf(all);
  const redis = await factory.connect('control');
  const queueConn = await factory.connect('control-queues').catch((e: unknown) => {
    redis.disconnect();
    throw e;
  });
  return controlOver(all, factory, redis, queueConn);
}

function factoryOf(all: LoadedConfig[]): RedisFactory {
  const first = all[0];
  if (!first?.config.redis) throw new ConfigError('this command needs Redis', ['redis.url: set it to the Redis the daemon uses']);
  return redisFactory(first);
}

function controlOver(all: LoadedConfig[], factory: RedisFactory, redis: RedisClient, queueConn: RedisClient): Control {
  const opts = { connection: queueConn, prefix: factory.bullPrefix };
  const queues = {
    reconcile: new Queue(QUEUE_NAMES.reconcile, opts),
    audit: new Queue(QUEUE_NAMES.audit, opts),
    apply: new Queue(QUEUE_NAMES.apply, opts),
  };
  // The command's own Redis calls fail with the error (and the CLI reports it once): the
  // emitters' copies of it are not printed again as raw stack traces (the connections'
  // error events are taken by the factory).
  const ignore = (): void => undefined;
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
      await Promise.all([redis, queueConn].map((c) => c.quit().catch(() => c.disconnect())));
    },
  };
}
