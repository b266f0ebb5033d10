/**
 * Options shared by several commands, and the global options every action can read.
 * A command adds what it needs: `.addOption(configOption()).addOption(jsonOption())`.
 */
import { ConfigError } from '../errors.ts';
import { type Command, Option } from 'commander';
import type { LoadedConfig } from '../config/load.ts';
import { createLogger, type Logger } from '../observability/logger.ts';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export const LOG_FORMATS = ['auto', 'json', 'pretty'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

export interface GlobalOptions {
  /** Stack traces on errors and debug logs. */
  debug: boolean;
  /** Overrides `logging.level` of the config. */
  logLevel?: LogLevel;
  /** `auto`: human-readable on a terminal, JSON lines otherwise (pipes, files, containers). */
  logFormat: LogFormat;
}

export function addGlobalOptions(program: Command): Command {
  return program
    .addOption(new Option('--debug', 'print stack traces on errors and log at debug level'))
    .addOption(new Option('--log-level <level>', 'override logging.level from the config').choices(LOG_LEVELS))
    .addOption(
      new Option(
        '--log-format <format>',
        'log lines on stderr: auto = readable, warnings and errors only, on a terminal and JSON otherwise',
      )
        .choices(LOG_FORMATS)
        .default('auto'),
    );
}

export function globalOptions(cmd: Command): GlobalOptions {
  const o = cmd.optsWithGlobals<{ debug?: boolean; logLevel?: LogLevel; logFormat?: LogFormat }>();
  return { debug: o.debug === true, logFormat: o.logFormat ?? 'auto', ...(o.logLevel ? { logLevel: o.logLevel } : {}) };
}

/**
 * How log lines look and from which level they print. On a terminal (`auto`), plan tables,
 * progress bars and audit summaries are the output: log lines are human-readable and only
 * warnings and errors show unless --log-level or --debug asks for more, so JSON never
 * interleaves with what a person reads. Elsewhere (and with --log-format json) they are JSON
 * lines at the configured level.
 */
export function logSettings(
  g: GlobalOptions,
  configured: LogLevel,
  stderr: { isTTY?: boolean } = process.stderr,
): { level: LogLevel; pretty: boolean } {
  const terminal = g.logFormat === 'auto' && stderr.isTTY === true;
  const pretty = g.logFormat === 'pretty' || terminal;
  const quiet = terminal && LOG_LEVELS.indexOf(configured) > LOG_LEVELS.indexOf('warn') ? 'warn' : configured;
  return { level: g.logLevel ?? (g.debug ? 'debug' : quiet), pretty };
}

/** `-c, --config <file>`; also read from SCIM_AUDIT_SYNC_CONFIG (handy in containers). */
export function configOption(): Option {
  return new Option('-c, --config <file>', 'YAML config file').env('SCIM_AUDIT_SYNC_CONFIG').makeOptionMandatory();
}

/** `-t, --tenant <id>`: which tenant of a multi-tenant config (optional when it lists one). */
export function tenantOption(description = 'which tenant of a multi-tenant config'): Option {
  return new Option('-t, --tenant <id>', description);
}

export function jsonOption(): Option {
  return new Option('--json', 'print machine-readable JSON on stdout');
}

/** The logger for a command: --log-level, else --debug, else the config's logging.level (warn at most on a terminal). */
export function commandLogger(cmd: Command, loaded?: Pick<LoadedConfig, 'config'>): Logger {
  const { level, pretty } = logSettings(globalOptions(cmd), loaded?.config.logging.level ?? 'info');
  return createLogger({ level, pretty, ...(loaded ? { base: { tenant: loaded.config.tenant } } : {}) });
}

/** A `--from`/`--to` value: an ISO 8601 date or an instant with its zone, as epoch milliseconds. */
export async function instantFlag(value: string, flag: string): Promise<number> {
  const { parseInstant } = await import('../audit/config-schema.ts');
  const ms = /^\d{4}-\d{2}-\d{2}(T.*(Z|[+-]\d{2}:?\d{2}))?$/i.test(value) ? parseInstant(value) : Number.NaN;
  if (Number.isNaN(ms))
    throw new ConfigError(`${flag} must be an ISO 8601 date (2026-11-01) or an instant with its zone (2026-11-01T08:00:00Z), got ${value}`);
  return ms;
}
