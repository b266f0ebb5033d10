/**
 * The settings check `validate` runs and the daemon runs before it starts: everything the
 * platform client, the source and the sinks would refuse at run time, refused now with the
 * key named (exit 2), instead of a daemon that reports ready and retries a bad sink forever.
 * Schema rules (URLs, HTTPS, exclusive keys) already ran at load; this adds the checks that
 * need the constructors or the referenced files. Nothing is connected.
 */
import { access, constants, stat } from 'node:fs/promises';
import type { LoadedConfig } from '../config/load.ts';
import { resolveConfigPath } from '../config/paths.ts';
import { ConfigError, isSyncError } from '../errors.ts';
import { platformClientOptions } from '../platform/from-config.ts';
import { PlatformClient } from '../platform/http-client.ts';
import { checkSinkSettings } from '../audit/sinks/check-settings.ts';
import { createSource, sourceContext } from '../sources/registry.ts';
import type { Logger } from '../observability/logger.ts';

const message = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/** One line per refused setting, `key: problem`; empty when every setting would be accepted. */
export async function preflightIssues(loaded: LoadedConfig, logger: Logger, where = ''): Promise<string[]> {
  const issues: string[] = [];
  try {
    await new PlatformClient(platformClientOptions(loaded)).close();
  } catch (e) {
    issues.push(`${where}platform: ${message(e)}`);
  }
  const source = loaded.config.provisioning?.source;
  if (source !== undefined && 'path' in source) {
    const problem = await unreadableFile(resolveConfigPath(loaded.configDir, source.path));
    if (problem !== undefined) issues.push(`${where}provisioning.source.path: ${problem}`);
  }
  if (source !== undefined) {
    try {
      await (await createSource(source, sourceContext(loaded, logger))).close?.();
    } catch (e) {
      issues.push(`${where}provisioning.source: ${isSyncError(e) ? e.message : message(e)}`);
    }
  }
  const sinks = loaded.config.audit?.sinks;
  if (sinks !== undefined) issues.push(...(await checkSinkSettings(sinks, loaded.configDir, `${where}audit.sinks`)));
  return issues;
}

/** Why a source file cannot be read, or undefined when it can. */
async function unreadableFile(path: string): Promise<string | undefined> {
  try {
    if (!(await stat(path)).isFile()) return `${path} is not a file`;
    await access(path, constants.R_OK);
    return undefined;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return `${path} does not exist (a relative path is read from the config file's directory)`;
    if (code === 'EACCES') return `${path} is not readable by this process`;
    return `${path} cannot be read (${code ?? message(e)})`;
  }
}

/** Throws one ConfigError listing every refused setting of every tenant. */
export async function assertPreflight(all: readonly LoadedConfig[], logger: Logger): Promise<void> {
  const issues: string[] = [];
  for (const loaded of all)
    issues.push(...(await preflightIssues(loaded, logger, all.length > 1 ? `tenant ${loaded.config.tenant}: ` : '')));
  if (issues.length > 0) throw new ConfigError(`${all[0]?.configPath ?? 'config'}: settings that would be refused at run time`, issues);
}
