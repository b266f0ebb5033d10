/**
 * Source factory by `type`. To add a source: add its config schema to sources/schema.ts
 * and one `case` here; the exhaustive switch makes the compiler point at this file.
 * Each source's module is imported when a config names it: a process pays only for its own
 * source (importing all five eagerly cost ~9 MB of a tiny `plan`'s start-up, bench:reconcile).
 */
import type { Logger } from '../observability/logger.ts';
import type { Secret } from '../config/secret.ts';
import type { LoadedConfig } from '../config/load.ts';
import type { SourceConfig } from './schema.ts';
import type { Source } from './source.ts';

export interface SourceContext {
  /** Relative paths in the source config are resolved against this directory. */
  configDir: string;
  logger: Logger;
  /** Content of the source's file-reference keys by key name (e.g. `bindPasswordFile`). */
  secrets?: ReadonlyMap<string, Secret>;
}

export async function createSource(config: SourceConfig, ctx: SourceContext): Promise<Source> {
  const type = config.type;
  switch (type) {
    case 'file':
      return new (await import('./file/file-source.ts')).FileSource(config, ctx);
    case 'ldap':
      return new (await import('./ldap/source.ts')).LdapSource(config, ctx);
    case 'csv':
      return new (await import('./csv/source.ts')).CsvSource(config, ctx);
    case 'scim':
      return new (await import('./scim/source.ts')).ScimSource(config, ctx);
    case 'google-workspace':
      return new (await import('./google/source.ts')).GoogleWorkspaceSource(config, ctx);
    case 'entra-id':
      return new (await import('./entra/source.ts')).EntraIdSource(config, ctx);
    case 'okta':
      return new (await import('./okta/source.ts')).OktaSource(config, ctx);
    default: {
      const unknown: never = type;
      throw new Error(`unknown source type ${String(unknown)}`);
    }
  }
}

const SOURCE_KEY_PREFIX = 'provisioning.source.';

/** The context for `provisioning.source` of a loaded config: its secrets keyed by their own key name. */
export function sourceContext(loaded: Pick<LoadedConfig, 'configDir' | 'secrets'>, logger: Logger): SourceContext {
  const secrets = new Map<string, Secret>();
  for (const [keyPath, secret] of loaded.secrets.files) {
    if (keyPath.startsWith(SOURCE_KEY_PREFIX)) secrets.set(keyPath.slice(SOURCE_KEY_PREFIX.length), secret);
  }
  return { configDir: loaded.configDir, logger, secrets };
}
