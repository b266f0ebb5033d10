/**
 * At daemon start, once per tenant: a ledger left in state.dir by the one-shot commands is
 * imported into an empty Redis ledger, so the switch to the daemon keeps what the tool manages
 * (otherwise every object it created would count as unmanaged: skipped, never deprovisioned).
 * A Redis ledger that holds anything, or a tenant imported before, is never touched.
 */
import { resolve } from 'node:path';
import type { LoadedConfig } from '../config/load.ts';
import type { Logger } from '../observability/logger.ts';
import { FileLedgerStore } from '../reconcile/file-ledger-store.ts';
import type { LedgerData } from '../reconcile/ledger.ts';

export async function importOneShotLedgers(all: readonly LoadedConfig[], logger: Logger): Promise<number> {
  const first = all[0];
  if (!first?.config.redis) return 0;
  // Only a tenant with a non-empty state.dir ledger costs a Redis round trip (most starts have none).
  const found: Array<{ tenant: string; file: FileLedgerStore; data: LedgerData }> = [];
  for (const loaded of all) {
    const { tenant } = loaded.config;
    const file = new FileLedgerStore(resolve(loaded.configDir, loaded.config.state.dir), tenant);
    const data = await file.load().catch(() => undefined);
    if (data !== undefined && Object.keys(data.users).length + Object.keys(data.groups).length > 0) found.push({ tenant, file, data });
  }
  if (found.length === 0) return 0;
  const [{ redisFactory }, { RedisLedger }] = await Promise.all([import('../jobs/redis.ts'), import('../jobs/redis-ledger.ts')]);
  const factory = redisFactory(first);
  const redis = factory.create('ledger-import');
  let imported = 0;
  try {
    for (const { tenant, file, data } of found) {
      const ledger = new RedisLedger(redis, factory.keyPrefix, tenant);
      if (await ledger.importIfEmpty(data)) {
        imported++;
        logger.info(
          {
            tenant,
            from: file.describe,
            to: ledger.describe,
            users: Object.keys(data.users).length,
            groups: Object.keys(data.groups).length,
          },
          'imported the one-shot ownership ledger into Redis (one time)',
        );
      }
    }
  } finally {
    await redis.quit().catch(() => redis.disconnect());
  }
  return imported;
}
