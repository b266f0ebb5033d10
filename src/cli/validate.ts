/**
 * `scim-audit-sync validate --config F [--check-connectivity] [--json]`
 * Loads and validates the config (exit 2 with one line per problem), prints the
 * effective config with secrets redacted. Settings a sink, the source or the platform client
 * would refuse at run time exit 2 as well (preflight.ts). With --check-connectivity it probes
 * the platform, the source and every sink read-only: exit 2 when a credential is refused
 * (401/403), 1 when a probe fails otherwise.
 */
import { Command, Option } from 'commander';
import type { LoadedConfig } from '../config/load.ts';
import { ConfigError } from '../errors.ts';
import type { CheckResult } from './connectivity.ts';
import { ExitCode, isConfigClassCode, runCommand } from './exit-codes.ts';
import { commandLogger, configOption, jsonOption, tenantOption } from './options.ts';
import { paint, printJson, printLines } from './output.ts';
import { printable } from '../observability/printable.ts';

interface ValidateOptions {
  config: string;
  tenant?: string;
  checkConnectivity?: boolean;
  json?: boolean;
}

export function validateCommand(): Command {
  return new Command('validate')
    .description('check the config file; with --check-connectivity also probe the platform, the source and the audit sinks (read-only)')
    .addOption(configOption())
    .addOption(tenantOption())
    .addOption(
      new Option(
        '--check-connectivity',
        'call the platform (one GET), read the source and health-check every sink (exit 2 on a refused credential)',
      ),
    )
    .addOption(jsonOption())
    .action(runCommand((opts: ValidateOptions, cmd: Command) => runValidate(opts, cmd)));
}

function checkLine(c: CheckResult): string {
  const status = c.ok ? paint('green', 'ok') : paint('red', 'failed');
  // A probe's detail can quote what a server answered: escaped (observability/printable.ts).
  return `${c.name.padEnd(12)} ${status}  ${c.code ? `[${c.code}] ` : ''}${printable(c.detail)}`;
}

export async function runValidate(opts: ValidateOptions, cmd: Command): Promise<number> {
  // Loaded when the command runs: `--help` does not load the config schema or the HTTP client.
  const [{ loadConfig }, { preflightIssues }, { redactConfig, summarizeConfig }] = await Promise.all([
    import('../config/load.ts'),
    import('./preflight.ts'),
    import('./config-summary.ts'),
  ]);
  let loaded: LoadedConfig;
  try {
    loaded = await loadConfig(opts.config, process.env, { tenant: opts.tenant });
  } catch (e) {
    if (!(opts.json && e instanceof ConfigError)) throw e;
    printJson({ ok: false, error: { code: e.code, message: e.message, issues: e.issues } });
    return ExitCode.CONFIG;
  }

  const logger = commandLogger(cmd, loaded);
  // Settings the sinks, the source or the platform client would refuse at run time: exit 2 now.
  const refused = await preflightIssues(loaded, logger);
  if (refused.length > 0) {
    const error = new ConfigError(`${loaded.configPath}: settings that would be refused at run time`, refused);
    if (!opts.json) throw error;
    printJson({ ok: false, error: { code: error.code, message: error.message, issues: error.issues } });
    return ExitCode.CONFIG;
  }

  const checks: CheckResult[] = [];
  if (opts.checkConnectivity) {
    const [{ checkPlatform, checkSinks, checkSource }, { checkUserAttributes }] = await Promise.all([
      import('./connectivity.ts'),
      import('./attribute-connectivity.ts'),
    ]);
    const [platform, source, sinks, attributes] = await Promise.all([
      checkPlatform(loaded),
      checkSource(loaded, logger),
      checkSinks(loaded),
      checkUserAttributes(loaded),
    ]);
    checks.push(platform);
    if (source) checks.push(source);
    checks.push(...sinks);
    if (attributes) checks.push(attributes);
  }
  const ok = checks.every((c) => c.ok);
  // A refused credential (401/403) needs a config or secret change, like the other commands: exit 2.
  const refusedCredential = checks.some((c) => !c.ok && c.code !== undefined && isConfigClassCode(c.code));

  if (opts.json) {
    printJson({ ok, configPath: loaded.configPath, config: redactConfig(loaded.config), ...(opts.checkConnectivity ? { checks } : {}) });
  } else {
    printLines([`${paint('green', 'config is valid')}: ${loaded.configPath}`, ...summarizeConfig(loaded).map((l) => `  ${l}`)]);
    if (checks.length > 0) printLines(['connectivity:', ...checks.map((c) => `  ${checkLine(c)}`)]);
  }
  return ok ? ExitCode.OK : refusedCredential ? ExitCode.CONFIG : ExitCode.FAILED;
}
