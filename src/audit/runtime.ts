/**
 * Loaded config → everything the audit engine needs: the platform client, the state and
 * dead-letter stores (Redis when the wiring hands a connection in, else files under
 * `state.dir`) and the sinks. Shared by the CLI commands and the demo; `close()` releases
 * what it opened (never the Redis connection it was handed). No job-layer import: opening
 * Redis is the wiring's business (src/cli/audit-redis.ts, the daemon's own connection).
 */
import type { Cluster, Redis } from 'ioredis';
import type { LoadedConfig } from '../config/load.ts';
import { resolveConfigPath } from '../config/paths.ts';
import type { Logger } from '../observability/logger.ts';
import { ConfigError } from '../errors.ts';
import { createPlatformClient } from '../platform/from-config.ts';
import type { PlatformClient, PlatformClientOptions } from '../platform/http-client.ts';
import type { AuditConfig } from './config-schema.ts';
import { FileDeadLetterStore } from './dead-letter/file-store.ts';
import { RedisDeadLetterStore } from './dead-letter/redis-store.ts';
import type { DeadLetterStore } from './dead-letter/store.ts';
import { createSink } from './sinks/registry.ts';
import type { Sink } from './sinks/sink.ts';
import { FileAuditStateStore, auditStateDir } from './state/file-store.ts';
import { RedisAuditStateStore } from './state/redis-store.ts';
import type { AuditStateStore } from './state/store.ts';

export interface AuditRuntime {
  tenant: string;
  config: AuditConfig;
  platform: PlatformClient;
  state: AuditStateStore;
  deadLetters: DeadLetterStore;
  sinks: Sink[];
  close(): Promise<void>;
}

/** A Redis connection and the key prefix of the deployment (`redis.keyPrefix`). */
export interface AuditRedis {
  client: Redis | Cluster;
  keyPrefix: string;
}

export interface AuditRuntimeOptions {
  platformOverrides?: Partial<PlatformClientOptions>;
  /** State and dead letters in Redis on this connection (required when `redis:` is configured). */
  redis?: AuditRedis;
}

export function requireAuditConfig(loaded: Pick<LoadedConfig, 'config'>): AuditConfig {
  const audit = loaded.config.audit;
  if (!audit) {
    throw new ConfigError('the config has no audit section', [
      'audit: add an `audit:` section with at least `sinks: [{ type: file, name: siem, path: audit.ndjson }]`',
    ]);
  }
  return audit;
}

export function buildAuditRuntime(loaded: LoadedConfig, logger: Logger, opts: AuditRuntimeOptions = {}): AuditRuntime {
  const config = requireAuditConfig(loaded);
  const { tenant } = loaded.config;
  let state: AuditStateStore;
  let deadLetters: DeadLetterStore;
  if (opts.redis) {
    state = new RedisAuditStateStore(opts.redis.client, opts.redis.keyPrefix, tenant);
    deadLetters = new RedisDeadLetterStore(opts.redis.client, opts.redis.keyPrefix, tenant);
  } else {
    // The file state of a config that names Redis would be a second, diverging cursor.
    if (loaded.config.redis)
      throw new ConfigError('redis is configured but no Redis connection was handed to the audit runtime (a wiring bug)');
    const dir = resolveConfigPath(loaded.configDir, loaded.config.state.dir);
    state = new FileAuditStateStore(dir, tenant);
    deadLetters = new FileDeadLetterStore(auditStateDir(dir, tenant));
  }
  const platform = createPlatformClient(loaded, opts.platformOverrides);
  const sinks = config.sinks.map((c) => createSink(c, { configDir: loaded.configDir, logger }));
  return {
    tenant,
    config,
    platform,
    state,
    deadLetters,
    sinks,
    async close() {
      await platform.close();
      await state.close();
      await deadLetters.close();
    },
  };
}
