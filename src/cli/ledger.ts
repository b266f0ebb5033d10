/**
 * `scim-audit-sync ledger export|import`: moves the ownership ledger between the one-shot
 * state directory (state.dir) and the daemon's Redis, so switching modes keeps what the tool
 * manages (an empty ledger would make every object "unmanaged": skipped, never deprovisioned).
 *   ledger export [--from state-dir|redis] [--out FILE]   JSON on stdout or in FILE
 *   ledger import [--in FILE] [--replace]                 into Redis (or state.dir without redis)
 *   ledger reassign --from A --to B --reason TEXT         hand an account over on purpose (ledger-reassign.ts)
 * Neither needs the platform token.
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { Command, Option } from 'commander';
import type { LoadedConfig } from '../config/load.ts';
import { ConfigError } from '../errors.ts';
import { FileLedgerStore } from '../reconcile/file-ledger-store.ts';
import type { LedgerData, LedgerStore } from '../reconcile/ledger.ts';
import { writeJsonFileAtomic } from '../state/atomic-file.ts';
import { ExitCode, runCommand } from './exit-codes.ts';
import { reassignCommand } from './ledger-reassign.ts';
import { configOption, tenantOption } from './options.ts';
import { printJson } from './output.ts';

export const LEDGER_FILE_KIND = 'scim-audit-sync/ledger';

interface LedgerFile {
  kind: typeof LEDGER_FILE_KIND;
  tenant: string;
  exportedFrom: string;
  exportedAt: string;
  ledger: LedgerData;
}

type Where = 'state-dir' | 'redis';

async function open(
  loaded: LoadedConfig,
  where: Where,
): Promise<{
  store: LedgerStore & { counts?: () => Promise<{ users: number; groups: number; pending: number }> };
  close(): Promise<void>;
}> {
  const { config } = loaded;
  if (where === 'state-dir')
    return { store: new FileLedgerStore(resolve(loaded.configDir, config.state.dir), config.tenant), close: async () => undefined };
  if (!config.redis)
    throw new ConfigError('the config has no redis section', ['redis.url: set it to the Redis the daemon uses, or use --from state-dir']);
  const [{ redisFactory }, { RedisLedger }] = await Promise.all([import('../jobs/redis.ts'), import('../jobs/redis-ledger.ts')]);
  const factory = redisFactory(loaded);
  const redis = await factory.connect('ledger');
  return {
    store: new RedisLedger(redis, factory.keyPrefix, config.tenant),
    close: async () => void (await redis.quit().catch(() => redis.disconnect())),
  };
}

const counts = (d: LedgerData | undefined): string =>
  `${Object.keys(d?.users ?? {}).length} users, ${Object.keys(d?.groups ?? {}).length} groups, ${d?.pending.length ?? 0} pending creates`;
const isEmpty = (d: LedgerData | undefined): boolean =>
  d === undefined || Object.keys(d.users).length + Object.keys(d.groups).length + d.pending.length === 0;

/** The config loader (zod, yaml, the schema) loads when a subcommand runs: `--help` does not load it. */
async function load(path: string, opts: { tenant?: string }): Promise<LoadedConfig> {
  const { loadConfig } = await import('../config/load.ts');
  return loadConfig(path, process.env, { tenant: opts.tenant, platformCredential: false });
}

function exportCommand(): Command {
  return new Command('export')
    .description('print the ownership ledger as JSON (default: from Redis when configured, else from state.dir)')
    .addOption(configOption())
    .addOption(tenantOption())
    .addOption(new Option('--from <where>', 'where to read it').choices(['state-dir', 'redis']))
    .addOption(new Option('--out <file>', 'write to this file instead of stdout'))
    .action(
      runCommand(async (opts: { config: string; tenant?: string; from?: Where; out?: string }) => {
        const loaded = await load(opts.config, opts);
        const from: Where = opts.from ?? (loaded.config.redis ? 'redis' : 'state-dir');
        const { store, close } = await open(loaded, from);
        try {
          const ledger = (await store.load()) ?? { version: 1, users: {}, groups: {}, pending: [] };
          const file: LedgerFile = {
            kind: LEDGER_FILE_KIND,
            tenant: loaded.config.tenant,
            exportedFrom: store.describe,
            exportedAt: new Date().toISOString(),
            ledger,
          };
          if (opts.out) {
            await writeJsonFileAtomic(opts.out, file);
            process.stderr.write(`exported ${counts(ledger)} of tenant ${file.tenant} from ${store.describe} to ${opts.out}\n`);
          } else printJson(file);
          return ExitCode.OK;
        } finally {
          await close();
        }
      }),
    );
}

async function readLedgerFile(path: string, tenant: string): Promise<LedgerData> {
  let f: Partial<LedgerFile>;
  try {
    f = JSON.parse(await readFile(path, 'utf8')) as Partial<LedgerFile>;
  } catch {
    throw new ConfigError(`cannot read ledger file ${path}`, ['--in: pass a file written by `scim-audit-sync ledger export --out FILE`']);
  }
  if (f.kind !== LEDGER_FILE_KIND || f.ledger?.version !== 1)
    throw new ConfigError(`${path} is not a ledger export`, [`--in: expected kind ${LEDGER_FILE_KIND}`]);
  if (f.tenant !== tenant)
    throw new ConfigError(`${path} holds the ledger of tenant ${f.tenant ?? '?'}`, [
      `--tenant: this config is tenant ${tenant}; import each tenant's own export`,
    ]);
  return f.ledger;
}

function importCommand(): Command {
  return new Command('import')
    .description(
      "load a ledger into the config's store (Redis when configured, else state.dir): from --in FILE, or from state.dir into Redis",
    )
    .addOption(configOption())
    .addOption(tenantOption())
    .addOption(new Option('--in <file>', 'a file written by `ledger export` (default: the ledger in state.dir)'))
    .addOption(new Option('--replace', 'replace a ledger that is not empty (default: refuse)'))
    .action(
      runCommand(async (opts: { config: string; tenant?: string; in?: string; replace?: boolean }) => {
        const loaded = await load(opts.config, opts);
        const to: Where = loaded.config.redis ? 'redis' : 'state-dir';
        if (opts.in === undefined && to === 'state-dir')
          throw new ConfigError('nothing to import', [
            '--in: pass a ledger export; without redis configured, the state dir is already where the ledger lives',
          ]);
        let data: LedgerData | undefined;
        let origin: string;
        if (opts.in !== undefined) {
          data = await readLedgerFile(opts.in, loaded.config.tenant);
          origin = opts.in;
        } else {
          const fileStore = new FileLedgerStore(resolve(loaded.configDir, loaded.config.state.dir), loaded.config.tenant);
          data = await fileStore.load();
          origin = fileStore.describe;
          if (data === undefined)
            throw new ConfigError(`no ledger at ${fileStore.path}`, [
              'state.dir: point it at the directory the one-shot commands used, or pass --in FILE',
            ]);
        }
        const { store, close } = await open(loaded, to);
        try {
          const existing = await store.load();
          if (!isEmpty(existing) && !opts.replace) {
            process.stderr.write(
              `error: ${store.describe} already holds ${counts(existing)}; nothing imported. Export it first if you need it, then re-run with --replace.\n`,
            );
            return ExitCode.CONFIG;
          }
          await store.save(data);
          process.stdout.write(`imported ${counts(data)} of tenant ${loaded.config.tenant} from ${origin} into ${store.describe}\n`);
          return ExitCode.OK;
        } finally {
          await close();
        }
      }),
    );
}

export function ledgerCommand(): Command {
  return new Command('ledger')
    .description(
      'export or import the ownership ledger (what this tool manages), e.g. when moving from one-shot commands to the daemon; reassign an account on purpose',
    )
    .addCommand(exportCommand())
    .addCommand(importCommand())
    .addCommand(reassignCommand());
}
