/**
 * Long-lived per-tenant objects of one daemon process: the platform client (one keep-alive
 * dispatcher, requests paced by the cross-replica rate limiter), the SCIM client, the Redis
 * ledger and the tenant's persisted state.
 */
import { pagingLimitsFrom } from '../platform/scim/listing-limits.ts';
import type { LoadedConfig } from '../config/load.ts';
import type { Logger } from '../observability/logger.ts';
import { platformHooks, recordRateLimitWait } from '../observability/instrument.ts';
import { createPlatformClient } from '../platform/from-config.ts';
import type { PlatformClient } from '../platform/http-client.ts';
import { ScimClient } from '../platform/scim/client.ts';
import { createGlobalRateLimiter, type GlobalRateLimiter } from './rate-limit.ts';
import type { RedisClient } from './redis.ts';
import { RedisLedger } from './redis-ledger.ts';
import { TenantState } from './tenant-state.ts';
import { tenantKeys } from './keys.ts';
import { createAttributeClient } from '../reconcile/attributes/from-config.ts';
import type { UserAttributesClient } from '../platform/user-attributes.ts';

export interface TenantRuntime {
  id: string;
  loaded: LoadedConfig;
  platform: PlatformClient;
  scim: ScimClient;
  /** The user-attribute API (own token), paced by the same limiter; undefined when none is configured. */
  attributes: UserAttributesClient | undefined;
  limiter: GlobalRateLimiter;
  ledger: RedisLedger;
  state: TenantState;
  close(): Promise<void>;
}

export interface RuntimeOptions {
  redis: RedisClient;
  keyPrefix: string;
  logger: Logger;
  /** Called on a platform 429 with the wait the server asked for (pauses the apply queue everywhere). */
  onRateLimited?: (ms: number) => void;
}

export function createTenantRuntime(loaded: LoadedConfig, opts: RuntimeOptions): TenantRuntime {
  const id = loaded.config.tenant;
  const logger = opts.logger.child({ tenant: id });
  const limiter = createGlobalRateLimiter(
    opts.redis,
    tenantKeys(opts.keyPrefix, id).rateLimit,
    loaded.config.daemon.rateLimit.requestsPerSecond,
  );
  const hooks = platformHooks(id, logger);
  let lastWait = 0;
  const overrides: Parameters<typeof createPlatformClient>[1] = {
    beforeRequest: async (signal) => {
      await limiter.acquire(signal);
      if (limiter.waitedSeconds > lastWait) {
        recordRateLimitWait(id, limiter.waitedSeconds - lastWait);
        lastWait = limiter.waitedSeconds;
      }
    },
    hooks: {
      ...hooks,
      onRateLimited: (e) => {
        hooks.onRateLimited?.(e);
        const ms = e.retryAfterMs ?? 1_000;
        void limiter.backOff(ms).catch(() => undefined);
        opts.onRateLimited?.(ms);
      },
    },
  };
  const platform = createPlatformClient(loaded, overrides);
  const attributes = createAttributeClient(loaded, overrides);
  const s = loaded.config.platform.scim;
  const scim = new ScimClient(platform, {
    scimPath: loaded.config.platform.scimPath,
    pageSize: s.pageSize,
    maxMembersPerPatch: s.maxMembersPerPatch,
    memberRemoveDialect: s.memberRemoveDialect,
    updateMethod: s.updateMethod,
    discover: s.discover,
    paging: pagingLimitsFrom(s.listing),
  });
  return {
    id,
    loaded,
    platform,
    scim,
    attributes: attributes?.client,
    limiter,
    ledger: new RedisLedger(opts.redis, opts.keyPrefix, id),
    state: new TenantState(opts.redis, opts.keyPrefix, id),
    close: async () => {
      await platform.close();
      await attributes?.platform.close();
    },
  };
}
