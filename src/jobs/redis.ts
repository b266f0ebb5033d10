/**
 * Redis connections for the daemon (ioredis): URL, TLS, password from a file, Sentinel
 * or Cluster. BullMQ needs `maxRetriesPerRequest: null` on worker connections so a Redis
 * outage blocks and reconnects instead of failing jobs.
 */
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import type { LoadedConfig } from '../config/load.ts';
import type { RedisConfig } from '../config/schema.ts';
import type { Logger } from '../observability/logger.ts';

export type RedisClient = Redis | Cluster;

export interface RedisFactory {
  /** A new connection (BullMQ workers/queues each want their own). */
  create(purpose: string): RedisClient;
  /** BullMQ key prefix: `{keyPrefix}` — the hash tag keeps each queue's keys in one Cluster slot. */
  bullPrefix: string;
  keyPrefix: string;
  config: RedisConfig;
}

export function redisFactory(loaded: Pick<LoadedConfig, 'config' | 'secrets'>): RedisFactory {
  const cfg = loaded.config.redis ?? defaultRedis();
  const password = loaded.secrets.files.get('redis.passwordFile')?.reveal();
  const ca = loaded.secrets.files.get('redis.tls.caFile')?.reveal();
  const url = new URL(cfg.url);
  const tlsOn = cfg.tls.enabled || url.protocol === 'rediss:';
  const base: RedisOptions = {
    maxRetriesPerRequest: null,
    enableReadyCheck: true,
    connectTimeout: cfg.connectTimeoutSeconds * 1000,
    // Reconnect forever with a capped backoff: the daemon must survive Redis restarts.
    retryStrategy: (times) => Math.min(times * 200, 5_000),
    ...(cfg.username ? { username: cfg.username } : {}),
    ...(password !== undefined ? { password } : {}),
    ...(tlsOn
      ? {
          tls: {
            ...(ca ? { ca } : {}),
            rejectUnauthorized: cfg.tls.rejectUnauthorized,
            ...(cfg.tls.servername ? { servername: cfg.tls.servername } : {}),
          },
        }
      : {}),
  };
  return {
    bullPrefix: `{${cfg.keyPrefix}}`,
    keyPrefix: cfg.keyPrefix,
    config: cfg,
    create(purpose) {
      const name = `scim-audit-sync:${purpose}`;
      if (cfg.cluster) {
        return new Cluster(cfg.cluster.nodes, { redisOptions: { ...base, connectionName: name }, enableReadyCheck: true });
      }
      if (cfg.sentinel) {
        return new Redis({ ...base, connectionName: name, sentinels: cfg.sentinel.nodes, name: cfg.sentinel.name });
      }
      return new Redis({
        ...base,
        connectionName: name,
        host: url.hostname,
        port: url.port ? Number(url.port) : 6379,
        db: url.pathname.length > 1 ? Number(url.pathname.slice(1)) : 0,
      });
    },
  };
}

function defaultRedis(): RedisConfig {
  return {
    url: 'redis://127.0.0.1:6379',
    keyPrefix: 'scimsync',
    tls: { enabled: false, rejectUnauthorized: true },
    connectTimeoutSeconds: 10,
  };
}

/**
 * Logs what the daemon needs from Redis: `maxmemory-policy noeviction` (BullMQ and the
 * audit cursor must never be evicted) and persistence (recommended for the cursor).
 * Managed Redis often forbids CONFIG: that is reported, not fatal.
 */
export async function checkRedisRequirements(
  redis: RedisClient,
  logger: Logger,
): Promise<{ evictionPolicy?: string; persistence?: string }> {
  const out: { evictionPolicy?: string; persistence?: string } = {};
  try {
    const res = (await redis.config('GET', 'maxmemory-policy')) as string[];
    const policy = res[1];
    if (policy !== undefined) {
      out.evictionPolicy = policy;
      if (policy !== 'noeviction')
        logger.warn(
          { maxmemoryPolicy: policy },
          'Redis maxmemory-policy should be noeviction: queued jobs and the audit cursor may otherwise be evicted',
        );
    }
  } catch (e) {
    logger.warn({ err: (e as Error).message }, 'cannot read Redis maxmemory-policy (CONFIG disabled?); make sure it is noeviction');
  }
  try {
    const info = await redis.info('persistence');
    const aof = /aof_enabled:(\d)/.exec(info)?.[1] === '1';

    out.persistence = aof ? 'aof' : 'no-aof';
    if (!aof)
      logger.info(
        { persistence: out.persistence },
        'Redis AOF persistence is off: enable it (appendonly yes) so the audit cursor and the ledger survive a Redis restart',
      );
  } catch (e) {
    logger.warn({ err: (e as Error).message }, 'cannot read Redis persistence info');
  }
  return out;
}
