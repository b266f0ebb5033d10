/**
 * Loads the configuration once: YAML → ${ENV} substitution → one zod validation →
 * file references read (secrets) → deep-frozen. Every problem found is reported
 * together in one ConfigError whose `issues` name the key path and the fix.
 */
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import { ConfigError } from '../platform/errors.ts';
import { substituteEnv, type Env } from './env.ts';
import { formatIssues } from './format-issues.ts';
import { configSchema, type Config } from './schema.ts';
import { readFileRefs } from './secrets.ts';
import { Secret } from './secret.ts';

export interface ConfigSecrets {
  /** The platform credential, from `platform.token` or the content of `platform.tokenFile`. */
  readonly platformToken: Secret;
  /** Content of every file-reference key by key path, e.g. `redis.passwordFile`, `platform.caFile`. */
  readonly files: ReadonlyMap<string, Secret>;
}

export interface LoadedConfig {
  /** Validated, defaults applied, deep-frozen. Paths in it are as written: resolve them with resolveConfigPath(configDir, …). */
  readonly config: Config;
  /** Absolute path of the config file. */
  readonly configPath: string;
  /** Directory relative paths in the config are resolved against. */
  readonly configDir: string;
  readonly secrets: ConfigSecrets;
}

export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/** Parses and validates config text; `configDir` is where relative file references point. */
export async function parseConfig(text: string, configDir: string, env: Env = process.env, label = 'config'): Promise<Omit<LoadedConfig, 'configPath'>> {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length > 0) {
    const issues = doc.errors.map((e) => {
      const pos = e.linePos?.[0];
      const text = (e.message.split('\n')[0] ?? e.message).replace(/ at line \d+, column \d+:?$/, '');
      return `${pos ? `line ${pos.line}, column ${pos.col}` : 'YAML'}: ${text}`;
    });
    throw new ConfigError(`${label} is not valid YAML`, issues);
  }
  const envIssues = substituteEnv(doc, env, lineCounter);
  if (envIssues.length > 0) throw new ConfigError(`${label}: environment substitution failed`, envIssues);

  const input: unknown = doc.toJS() ?? {};
  const parsed = configSchema.safeParse(input);
  if (!parsed.success) {
    throw new ConfigError(`${label} is invalid`, formatIssues(parsed.error.issues, { schema: configSchema, input }));
  }
  const config = parsed.data;

  const { files, issues } = await readFileRefs(configSchema, config, configDir);
  if (issues.length > 0) throw new ConfigError(`${label}: cannot read referenced files`, issues.sort());

  const token = config.platform.token !== undefined ? new Secret(config.platform.token, 'platform.token') : files.get('platform.tokenFile');
  // The schema guarantees one of the two; this guards against a schema edit breaking that.
  if (token === undefined) throw new ConfigError(`${label} is invalid`, ['platform.token: set platform.token or platform.tokenFile']);

  return {
    config: deepFreeze(config),
    configDir,
    secrets: Object.freeze({ platformToken: token, files }),
  };
}

export async function loadConfig(path: string, env: Env = process.env): Promise<LoadedConfig> {
  const configPath = resolve(path);
  let text: string;
  try {
    text = await readFile(configPath, 'utf8');
  } catch (e) {
    const code = (e as { code?: string }).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : code === 'EISDIR' ? 'is a directory' : (code ?? 'unreadable');
    throw new ConfigError(`cannot read config file ${configPath} (${why})`, [`--config: cannot read ${configPath} (${why}); pass the path of a YAML config file`]);
  }
  const loaded = await parseConfig(text, dirname(configPath), env, configPath);
  return Object.freeze({ ...loaded, configPath });
}
