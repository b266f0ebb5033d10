/**
 * Loaded config → everything the audit engine needs: the platform client, the state and
 * dead-letter stores (Redis when `redis` is configured, else files under `state.dir`) and
 * the sinks. Shared by the CLI commands, the demo and the daemon; `close()` releases all.
 */
import type { LoadedConfig } from '../config/load.ts';
import { resolveConfigPath } from '../config/paths.ts';
import type { RedisClient } from '../jobs/redis.ts';
import type { Logger } from '../observability/logger.ts';
import { ConfigError } from '../platform/errors.ts';
import { createPlatformClient } from '../platform/from-config.ts';
import type { PlatformClient, PlatformClientOptions } from '../platform/http-client.ts';
import type { AuditConfig } from './config-schema.ts';
import { FileDeadLetterStore } from './dead-letter/file-store.ts';
import type { DeadLetterStore } from './dead-letter/store.ts';
import { createSink } from './sinks/registry.ts';
import type { Sink } from './sinks/sink.ts';
import { FileAuditStateStore, auditStateDir } from './state/file-store.ts';
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

export interface AuditRuntimeOptions {
  platformOverrides?: Partial<PlatformClientOptions>;
  /** Reuse the daemon's connection instead of opening one. */
  redis?: RedisClient;
}

export function requireAuditConfig(loaded: Pick<LoadedConfig, 'config'>): AuditConfig {
  const audit = loaded.config.audit;
  if (!audit) {
    throw new ConfigError('the config has no audit section', ['audit: add an `audit:` section with at least `sinks: [{ type: file, name: siem, path: audit.ndjson }]`']);
  }
  return audit;
}

/** Redis-backed stores are loaded only when Redis is configured (the file-only CLI never loads ioredis). */
export async function buildAuditRuntime(loaded: LoadedConfig, logger: Logger, opts: AuditRuntimeOptions = {}): Promise<AuditRuntime> {
  const config = requireAuditConfig(loaded);
  const { tenant } = loaded.config;
  let ownRedis: RedisClient | undefined;
  let state: AuditStateStore;
  let deadLetters: DeadLetterStore;
  if (loaded.config.redis || opts.redis) {
    const [{ redisFactory }, { RedisAuditStateStore }, { RedisDeadLetterStore }] = await Promise.all([
      import('../jobs/redis.ts'),
      import('./state/redis-store.ts'),
      import('./dead-letter/redis-store.ts'),
    ]);
    const factory = redisFactory(loaded);
    const redis = opts.redis ?? (ownRedis = factory.create('audit-state'));
    state = new RedisAuditStateStore(redis, factory.keyPrefix, tenant);
    deadLetters = new RedisDeadLetterStore(redis, factory.keyPrefix, tenant);
  } else {
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
      if (ownRedis) await ownRedis.quit().catch(() => ownRedis?.disconnect());
    },
  };
}
