/**
 * Builds a ReconcileContext from a loaded config: the source, the SCIM client (as the
 * engine's target) and the ledger store. Shared by the CLI commands and the daemon.
 */
import { pagingLimitsFrom } from '../platform/scim/listing-limits.ts';
import { resolve } from 'node:path';
import type { LoadedConfig } from '../config/load.ts';
import { ConfigError } from '../errors.ts';
import { createPlatformClient } from '../platform/from-config.ts';
import type { PlatformClient, PlatformClientOptions } from '../platform/http-client.ts';
import { ScimClient } from '../platform/scim/client.ts';
import type { Logger } from '../observability/logger.ts';
import { createSource, sourceContext } from '../sources/registry.ts';
import type { ReconcileContext } from './engine.ts';
import { FileLedgerStore } from './file-ledger-store.ts';
import type { LedgerStore } from './ledger.ts';
import { createAttributeClient } from './attributes/from-config.ts';

export interface BuiltReconcileContext extends ReconcileContext {
  platform: PlatformClient;
  scim: ScimClient;
  close(): Promise<void>;
}

export async function buildReconcileContext(
  loaded: LoadedConfig,
  logger: Logger,
  opts: { ledgerStore?: LedgerStore; platformOverrides?: Partial<PlatformClientOptions>; signal?: AbortSignal; readOnly?: boolean } = {},
): Promise<BuiltReconcileContext> {
  const { config } = loaded;
  if (!config.provisioning) {
    throw new ConfigError('the config has no provisioning section', [
      'provisioning: add a `provisioning:` section with at least `source: { type: file, path: … }`',
    ]);
  }
  // `readOnly` (plan): every non-GET request is refused at the dispatcher, see platform/read-only.ts.
  const platform = createPlatformClient(loaded, { ...opts.platformOverrides, ...(opts.readOnly ? { readOnly: true } : {}) });
  const s = config.platform.scim;
  const scim = new ScimClient(platform, {
    scimPath: config.platform.scimPath,
    pageSize: s.pageSize,
    maxMembersPerPatch: s.maxMembersPerPatch,
    memberRemoveDialect: s.memberRemoveDialect,
    updateMethod: s.updateMethod,
    discover: s.discover,
    paging: pagingLimitsFrom(s.listing),
  });
  const source = await createSource(config.provisioning.source, sourceContext(loaded, logger));
  const ledgerStore = opts.ledgerStore ?? new FileLedgerStore(resolve(loaded.configDir, config.state.dir), config.tenant);
  const attributes = createAttributeClient(loaded, { ...opts.platformOverrides, ...(opts.readOnly ? { readOnly: true } : {}) });
  return {
    tenant: config.tenant,
    config: config.provisioning,
    source,
    target: scim,
    scim,
    platform,
    ledgerStore,
    ...(attributes ? { attributes: attributes.client } : {}),
    ...(opts.signal ? { signal: opts.signal } : {}),
    async close() {
      await source.close?.();
      await platform.close();
      await attributes?.platform.close();
    },
  };
}
