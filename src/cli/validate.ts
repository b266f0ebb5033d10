/**
 * `scim-audit-sync validate --config F [--check-connectivity] [--json]`
 * Loads and validates the config (exit 2 with one line per problem), prints the
 * effective config with secrets redacted and, on request, probes the platform and the
 * source read-only (exit 1 when a probe fails).
 */
import { Command, Option } from 'commander';
import { loadConfig, type LoadedConfig } from '../config/load.ts';
import { ConfigError } from '../platform/errors.ts';
import { checkPlatform, checkSource, type CheckResult } from './connectivity.ts';
import { checkUserAttributes } from './attribute-connectivity.ts'; // [h17]
import { redactConfig, summarizeConfig } from './config-summary.ts';
import { ExitCode, runCommand } from './exit-codes.ts';
import { commandLogger, configOption, jsonOption, tenantOption } from './options.ts';
import { paint, printJson, printLines } from './output.ts';

interface ValidateOptions {
  config: string;
  tenant?: string;
  checkConnectivity?: boolean;
  json?: boolean;
}

export function validateCommand(): Command {
  return new Command('validate')
    .description('check the config file; with --check-connectivity also probe the platform and the source (read-only)')
    .addOption(configOption())
    .addOption(tenantOption())
    .addOption(new Option('--check-connectivity', 'call the platform (one GET) and read the source'))
    .addOption(jsonOption())
    .action(runCommand((opts: ValidateOptions, cmd: Command) => runValidate(opts, cmd)));
}

function checkLine(c: CheckResult): string {
  const status = c.ok ? paint('green', 'ok') : paint('red', 'failed');
  return `${c.name.padEnd(8)} ${status}  ${c.code ? `[${c.code}] ` : ''}${c.detail}`;
}

export async function runValidate(opts: ValidateOptions, cmd: Command): Promise<number> {
  let loaded: LoadedConfig;
  try {
    loaded = await loadConfig(opts.config, process.env, { tenant: opts.tenant });
  } catch (e) {
    if (!(opts.json && e instanceof ConfigError)) throw e;
    printJson({ ok: false, error: { code: e.code, message: e.message, issues: e.issues } });
    return ExitCode.CONFIG;
  }

  const checks: CheckResult[] = [];
  if (opts.checkConnectivity) {
    const logger = commandLogger(cmd, loaded);
    const [platform, source, attributes] = await Promise.all([checkPlatform(loaded), checkSource(loaded, logger), checkUserAttributes(loaded)]);
    checks.push(platform);
    if (source) checks.push(source);
    if (attributes) checks.push(attributes); // [h17 user attributes]
  }
  const ok = checks.every((c) => c.ok);

  if (opts.json) {
    printJson({ ok, configPath: loaded.configPath, config: redactConfig(loaded.config), ...(opts.checkConnectivity ? { checks } : {}) });
  } else {
    printLines([`${paint('green', 'config is valid')}: ${loaded.configPath}`, ...summarizeConfig(loaded).map((l) => `  ${l}`)]);
    if (checks.length > 0) printLines(['connectivity:', ...checks.map((c) => `  ${checkLine(c)}`)]);
  }
  return ok ? ExitCode.OK : ExitCode.FAILED;
}
