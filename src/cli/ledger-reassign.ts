/**
 * `scim-audit-sync ledger reassign --from A --to B --reason TEXT`: hands the account the
 * ownership ledger records for externalId A to externalId B on purpose (an HR id migration, a
 * rehire of the same person under a new id), where the planner would otherwise report an
 * identity conflict. Works on the daemon's Redis ledger when the config has `redis` (entry by
 * entry, safe next to a running daemon), else on the state directory's ledger; records a
 * `user.reassign` entry in the provisioning log of the same store. Needs no platform token:
 * the next apply writes B as the account's externalId.
 */
import { resolve } from 'node:path';
import { Command, Option } from 'commander';
import type { LoadedConfig } from '../config/load.ts';
import { ConfigError } from '../errors.ts';
import type { ProvisioningLogStore } from '../provisioning-log/store.ts';
import { ExitCode, runCommand } from './exit-codes.ts';
import { configOption, tenantOption } from './options.ts';

type Where = 'state-dir' | 'redis';

interface Opts {
  config: string;
  tenant?: string;
  from: string;
  to: string;
  reason: string;
  store?: Where;
}

async function load(path: string, tenant: string | undefined): Promise<LoadedConfig> {
  const { loadConfig } = await import('../config/load.ts');
  return loadConfig(path, process.env, { tenant, platformCredential: false });
}

async function reassign(opts: Opts): Promise<number> {
  // Loaded when the command runs: `--help` loads none of it.
  const [{ retentionOf }, { reassignRecord }, { newRunId }, { FileLedgerStore }, { Ledger }, { planReassign }] = await Promise.all([
    import('../provisioning-log/config-schema.ts'),
    import('../provisioning-log/identity.ts'),
    import('../provisioning-log/local.ts'),
    import('../reconcile/file-ledger-store.ts'),
    import('../reconcile/ledger.ts'),
    import('../reconcile/reassign.ts'),
  ]);
  const loaded = await load(opts.config, opts.tenant);
  const { config } = loaded;
  const where: Where = opts.store ?? (config.redis ? 'redis' : 'state-dir');
  if (opts.reason.trim() === '') throw new ConfigError('--reason is empty', ['--reason: why the account changes hands (it is logged)']);
  const base = { time: new Date().toISOString(), tenant: config.tenant, runId: newRunId() };
  const by = process.env['USER'] ?? process.env['LOGNAME'];
  let ids: string[];
  let log: ProvisioningLogStore;
  let describe: string;
  let close = async (): Promise<void> => undefined;
  if (where === 'state-dir') {
    const stateDir = resolve(loaded.configDir, config.state.dir);
    const store = new FileLedgerStore(stateDir, config.tenant);
    const ledger = await Ledger.load(store);
    ids = planReassign(ledger.toJSON(), opts.from, opts.to).ids;
    for (const id of ids) ledger.record('user', id, opts.to);
    await ledger.save(store);
    const { FileProvisioningLogStore } = await import('../provisioning-log/file-store.ts');
    log = new FileProvisioningLogStore(stateDir, config.tenant, retentionOf(config.provisioningLog));
    describe = store.describe;
  } else {
    if (!config.redis)
      throw new ConfigError('the config has no redis section', [
        'redis.url: set it to the Redis the daemon uses, or use --store state-dir',
      ]);
    const [{ redisFactory }, { RedisLedger }, { RedisProvisioningLogStore }] = await Promise.all([
      import('../jobs/redis.ts'),
      import('../jobs/redis-ledger.ts'),
      import('../provisioning-log/redis-store.ts'),
    ]);
    const factory = redisFactory(loaded);
    const redis = factory.create('ledger');
    close = async () => void (await redis.quit().catch(() => redis.disconnect()));
    try {
      const store = new RedisLedger(redis, factory.keyPrefix, config.tenant);
      ids = planReassign(await store.load(), opts.from, opts.to).ids;
      for (const id of ids) await store.reassign('user', id, opts.from, opts.to);
      log = new RedisProvisioningLogStore(redis, factory.keyPrefix, config.tenant, retentionOf(config.provisioningLog));
      describe = store.describe;
    } catch (e) {
      await close();
      throw e;
    }
  }
  try {
    await log.append(ids.map((id) => reassignRecord(base, { id, from: opts.from, to: opts.to, by, note: opts.reason })));
  } finally {
    await log.close();
    await close();
  }
  process.stdout.write(
    `reassigned ${ids.length === 1 ? 'account' : 'accounts'} ${ids.join(', ')} of tenant ${config.tenant} from ${opts.from} to ${opts.to} in ${describe} (recorded in the provisioning log); the next apply writes externalId ${opts.to} on the platform\n`,
  );
  return ExitCode.OK;
}

export function reassignCommand(): Command {
  return new Command('reassign')
    .description(
      'hand the account of one externalId to another on purpose (same person: HR id migration, rehire); it keeps its groups and attribute values',
    )
    .addOption(configOption())
    .addOption(tenantOption())
    .addOption(new Option('--from <externalId>', 'the externalId the ledger gives the account to now').makeOptionMandatory())
    .addOption(new Option('--to <externalId>', 'the externalId it belongs to from now on').makeOptionMandatory())
    .addOption(new Option('--reason <text>', 'why (recorded in the provisioning log)').makeOptionMandatory())
    .addOption(
      new Option('--store <where>', 'which ledger (default: Redis when configured, else state.dir)').choices(['state-dir', 'redis']),
    )
    .action(runCommand((opts: Opts) => reassign(opts)));
}
