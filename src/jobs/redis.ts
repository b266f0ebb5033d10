/**
 * Redis connections for the daemon (ioredis): URL, TLS, password from a file, Sentinel
 * or Cluster. BullMQ needs `maxRetriesPerRequest: null` on worker connections so a Redis
 * outage blocks and reconnects instead of failing jobs.
 *
 * Failover: a command sent while a master is down waits for its replica's promotion instead
 * of failing (a failed completion mark would make a retried job repeat platform writes).
 * Single server and Sentinel: the offline queue holds commands until the reconnect (each
 * reconnect asks the sentinels for the master, so the promoted replica is found within the
 * reconnect backoff, at most 2 s, of its promotion).
 * Cluster: ioredis retries a command whose node is gone every `FAILOVER_RETRY_MS` and gives
 * up after `maxRedirections` attempts, so the budget is sized from
 * `redis.failoverTimeoutSeconds` (ioredis's default, 16 × 100 ms, is over long before a
 * Cluster promotes a replica: `cluster-node-timeout`, 15 s by default, plus the election).
 */
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import type { LoadedConfig } from '../config/load.ts';
import type { RedisConfig } from '../config/schema.ts';
import { ErrorCodes, SyncError } from '../errors.ts';
import type { Logger } from '../observability/logger.ts';

export type RedisClient = Redis | Cluster;

export interface RedisFactory {
  /**
   * A new connection (BullMQ workers/queues each want their own). `onError` receives its
   * error events; without one they are dropped (the failing commands report them), so no
   * connection ever prints ioredis's "Unhandled error event" stack trace.
   */
  create(purpose: string, onError?: (err: unknown) => void): RedisClient;
  /**
   * A connection that is ready, for commands an operator waits on: rejects with
   * `E_REDIS_UNAVAILABLE` naming the configured address (never its password) when Redis does
   * not answer within `redis.connectTimeoutSeconds`.
   */
  connect(purpose: string): Promise<RedisClient>;
  /** Where Redis is, as configured, for messages: the key and its address, without credentials. */
  describe: string;
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
    // Reconnect forever with a capped backoff: the daemon must survive Redis restarts, and
    // a promoted replica is found within a second of its promotion.
    retryStrategy: (times) => Math.min(times * 100, RECONNECT_CAP_MS),
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
  const describe = describeRedis(cfg);
  const factory: RedisFactory = {
    bullPrefix: `{${cfg.keyPrefix}}`,
    keyPrefix: cfg.keyPrefix,
    config: cfg,
    describe,
    create(purpose, onError = () => undefined) {
      const client = open(purpose);
      client.on('error', onError);
      return client;
    },
    async connect(purpose) {
      let last: unknown;
      const client = factory.create(purpose, (e) => void (last = e));
      const ms = cfg.connectTimeoutSeconds * 1000;
      if (await readyWithin(client, ms)) return client;
      client.disconnect();
      const why = last instanceof Error ? `: ${last.message}` : '';
      throw new SyncError(
        ErrorCodes.REDIS_UNAVAILABLE,
        'transient',
        `Redis at ${describe} did not answer within ${cfg.connectTimeoutSeconds} s (redis.connectTimeoutSeconds)${why}`,
      );
    },
  };
  return factory;

  function open(purpose: string): RedisClient {
    const name = `scim-audit-sync:${purpose}`;
    if (cfg.cluster) {
      return new Cluster(cfg.cluster.nodes, { ...clusterFailover(cfg), redisOptions: { ...base, connectionName: name } });
    }
    if (cfg.sentinel) {
      return new Redis({
        ...base,
        connectionName: name,
        sentinels: cfg.sentinel.nodes,
        name: cfg.sentinel.name,
        // Every sentinel unreachable: keep asking them (capped), never give up.
        sentinelRetryStrategy: (times) => Math.min(times * 100, RECONNECT_CAP_MS),
      });
    }
    return new Redis({
      ...base,
      connectionName: name,
      host: url.hostname,
      port: url.port ? Number(url.port) : 6379,
      db: url.pathname.length > 1 ? Number(url.pathname.slice(1)) : 0,
    });
  }
}

/** `redis.url redis://host:6379/0`, `redis.cluster.nodes …`, `redis.sentinel …`: never a password. */
export function describeRedis(cfg: RedisConfig): string {
  if (cfg.cluster) return `redis.cluster.nodes ${cfg.cluster.nodes.map((n) => `${n.host}:${n.port}`).join(', ')}`;
  if (cfg.sentinel) return `redis.sentinel ${cfg.sentinel.name} via ${cfg.sentinel.nodes.map((n) => `${n.host}:${n.port}`).join(', ')}`;
  try {
    const u = new URL(cfg.url);
    u.password = '';
    return `redis.url ${u.toString()}`;
  } catch {
    return 'redis.url (not a valid URL)';
  }
}

/**
 * One read in each hash slot the daemon writes to (`keys`: one key per slot), bounded by
 * `ms`. A PING would be answered by any node of a Cluster, also while the master holding the
 * daemon's slots is dead and its replica not yet promoted; a keyed read is not.
 */
export async function probeSlots(redis: RedisClient, keys: readonly string[], ms: number): Promise<true | string> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<string>((resolve) => {
    timer = setTimeout(
      () => resolve(`no answer within ${ms} ms (${redis.status === 'ready' ? 'failover in progress?' : `connection ${redis.status}`})`),
      ms,
    );
  });
  const probe = Promise.all(keys.map((k) => redis.exists(k))).then(
    () => true as const,
    (e: unknown) => (e instanceof Error && e.message ? e.message : 'unreachable'),
  );
  try {
    return await Promise.race([probe, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Whether the client became ready within `ms` (it keeps reconnecting in the background either way). */
function readyWithin(client: RedisClient, ms: number): Promise<boolean> {
  if (client.status === 'ready') return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = (ok: boolean): void => {
      clearTimeout(timer);
      client.off('ready', onReady);
      resolve(ok);
    };
    const onReady = (): void => done(true);
    const timer = setTimeout(() => done(false), ms);
    client.once('ready', onReady);
  });
}

/** Longest pause between two reconnect attempts, milliseconds. */
const RECONNECT_CAP_MS = 2_000;
/** Pause between two attempts of a Cluster command whose slot has no reachable master, milliseconds. */
export const FAILOVER_RETRY_MS = 200;

/** The Cluster's retry budget: a command keeps trying for `failoverTimeoutSeconds`. */
export function clusterFailover(cfg: Pick<RedisConfig, 'failoverTimeoutSeconds'>): ClusterOptions {
  const attempts = Math.ceil((cfg.failoverTimeoutSeconds * 1000) / FAILOVER_RETRY_MS);
  return {
    enableReadyCheck: true,
    // A node lost its connection (killed master): retried on another node until its slot moves.
    retryDelayOnFailover: FAILOVER_RETRY_MS,
    // CLUSTERDOWN (the cluster noticed the master is gone, the replica is not promoted yet).
    retryDelayOnClusterDown: FAILOVER_RETRY_MS,
    // TRYAGAIN (a multi-key command during a slot migration).
    retryDelayOnTryAgain: FAILOVER_RETRY_MS,
    // Each retry above counts as one redirection; MOVED/ASK redirections cost no wait.
    maxRedirections: attempts + 16,
    // Every node unreachable: reconnect with a capped backoff, forever.
    clusterRetryStrategy: (times) => Math.min(times * 100, RECONNECT_CAP_MS),
  };
}

function defaultRedis(): RedisConfig {
  return {
    url: 'redis://127.0.0.1:6379',
    keyPrefix: 'scimsync',
    tls: { enabled: false, rejectUnauthorized: true },
    connectTimeoutSeconds: 10,
    failoverTimeoutSeconds: 30,
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
