/**
 * `scim-audit-sync log [--user X] [--since T] [--action A] [--result failed] [--json]`:
 * what the sync changed, failed to change or held, newest first. Reads the daemon's Redis
 * stream when the config has `redis` (else, or with `--store file`, the one-shot commands'
 * JSON lines in the state directory).
 */
import { Command, Option } from 'commander';
import { ConfigError } from '../errors.ts';
import { parseSince, type LogQuery } from '../provisioning-log/query.ts';
import type { RecordResult } from '../provisioning-log/record.ts';
import { renderRecord } from '../provisioning-log/render.ts';
import type { ProvisioningLogStore } from '../provisioning-log/store.ts';
import { ExitCode, runCommand } from './exit-codes.ts';
import { configOption, jsonOption, tenantOption } from './options.ts';
import { printJson } from './output.ts';

interface LogOptions {
  config: string;
  tenant?: string;
  user?: string;
  since?: string;
  action?: string;
  result?: RecordResult;
  limit: string;
  store?: 'redis' | 'file';
  json?: boolean;
}

export function logCommand(): Command {
  return new Command('log')
    .description('the provisioning log: every change the sync made, failed to make or held, newest first')
    .addOption(configOption())
    .addOption(tenantOption())
    .addOption(
      new Option(
        '--user <text>',
        'records about this person or group: part of a userName, externalId, platform id or displayName (also finds their membership changes)',
      ),
    )
    .addOption(new Option('--since <time>', 'records from this time on: 30m, 2h, 7d or an ISO 8601 date/instant'))
    .addOption(new Option('--action <action>', 'user.create, user.update, user.deactivate, group.members, … or just user / group'))
    .addOption(new Option('--result <result>', 'only ok, failed or held records').choices(['ok', 'failed', 'held']))
    .addOption(new Option('--limit <n>', 'most records shown').default('100'))
    .addOption(
      new Option('--store <store>', 'redis (the daemon; default when the config has redis) or file (the one-shot commands)').choices([
        'redis',
        'file',
      ]),
    )
    .addOption(jsonOption())
    .action(runCommand((opts: LogOptions) => run(opts)));
}

async function run(opts: LogOptions): Promise<number> {
  // Loaded when the command runs: `--help` does not load the config schema.
  const [{ loadConfig }, { retentionOf }, { FileProvisioningLogStore }, { stateDirOf }] = await Promise.all([
    import('../config/load.ts'),
    import('../provisioning-log/config-schema.ts'),
    import('../provisioning-log/file-store.ts'),
    import('../provisioning-log/local.ts'),
  ]);
  const loaded = await loadConfig(opts.config, process.env, { tenant: opts.tenant, platformCredential: false });
  const limit = Number(opts.limit);
  if (!Number.isInteger(limit) || limit < 1)
    throw new ConfigError('invalid --limit', [`--limit: a whole number ≥ 1, not ${JSON.stringify(opts.limit)}`]);
  const sinceMs = opts.since !== undefined ? parseSince(opts.since) : undefined;
  if (opts.since !== undefined && sinceMs === undefined)
    throw new ConfigError('invalid --since', [
      `--since: use 30m, 2h, 7d or an ISO 8601 date such as 2026-01-31, not ${JSON.stringify(opts.since)}`,
    ]);
  const q: LogQuery = {
    limit,
    ...(opts.user !== undefined ? { user: opts.user } : {}),
    ...(sinceMs !== undefined ? { sinceMs } : {}),
    ...(opts.action !== undefined ? { action: opts.action } : {}),
    ...(opts.result !== undefined ? { result: opts.result } : {}),
  };
  const useRedis = (opts.store ?? (loaded.config.redis ? 'redis' : 'file')) === 'redis';
  const retention = retentionOf(loaded.config.provisioningLog);
  let store: ProvisioningLogStore;
  let close = async (): Promise<void> => undefined;
  if (useRedis) {
    // Loaded on demand: the file-only command never loads ioredis.
    const [{ redisFactory }, { RedisProvisioningLogStore }] = await Promise.all([
      import('../jobs/redis.ts'),
      import('../provisioning-log/redis-store.ts'),
    ]);
    const factory = redisFactory(loaded);
    const redis = await factory.connect('log');
    store = new RedisProvisioningLogStore(redis, factory.keyPrefix, loaded.config.tenant, retention);
    close = async () => void (await redis.quit().catch(() => redis.disconnect()));
  } else {
    store = new FileProvisioningLogStore(stateDirOf(loaded), loaded.config.tenant, retention);
  }
  try {
    const records = await store.query(q);
    if (opts.json) printJson(records);
    else if (records.length === 0) process.stdout.write(`no provisioning-log records match (${store.describe})\n`);
    else process.stdout.write(`${records.map(renderRecord).join('\n')}\n`);
    return ExitCode.OK;
  } finally {
    await close();
  }
}
