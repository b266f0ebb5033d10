/**
 * Loads the configuration once: YAML → ${ENV} substitution → one zod validation →
 * file references read (secrets) → deep-frozen. Every problem found is reported
 * together in one ConfigError whose `issues` name the key path and the fix.
 */
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { isMap, isSeq, LineCounter, parseDocument, type Document } from 'yaml';
import { ConfigError } from '../errors.ts';
import { substituteEnv, type Env } from './env.ts';
import { formatIssues } from './format-issues.ts';
import { configSchema, SHARED_KEYS, type Config } from './schema.ts';
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
export interface LoadOptions {
  /** Which tenant of a multi-tenant file; optional when it lists one. */
  tenant?: string | undefined;
  /**
   * `false` for the commands that only read or write Redis (status, trigger, resume,
   * approve-deletes): `platform.token` / `platform.tokenFile` are neither substituted nor read,
   * so an operator's shell needs no platform credential. The loaded config then carries a
   * placeholder token (NO_PLATFORM_TOKEN): those commands build no platform client.
   */
  platformCredential?: boolean;
}

/** Stands in for the platform token when a command does not need it; never sent anywhere. */
export const NO_PLATFORM_TOKEN = 'not-loaded-by-this-command';

/** Drops the platform credential keys of every tenant and puts the placeholder in their place. */
function withoutPlatformCredential(doc: Document): void {
  const roots: Array<Array<string | number>> = [];
  const tenants = doc.get('tenants');
  if (isSeq(tenants)) tenants.items.forEach((_, i) => roots.push(['tenants', i, 'platform']));
  else roots.push(['platform']);
  for (const root of roots) {
    if (!isMap(doc.getIn(root))) continue;
    doc.deleteIn([...root, 'tokenFile']);
    doc.setIn([...root, 'token'], NO_PLATFORM_TOKEN);
  }
}

function toInput(text: string, env: Env, label: string, opts: LoadOptions = {}): unknown {
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
  if (opts.platformCredential === false) withoutPlatformCredential(doc);
  const envIssues = substituteEnv(doc, env, lineCounter);
  if (envIssues.length > 0) throw new ConfigError(`${label}: environment substitution failed`, envIssues);

  return doc.toJS() ?? {};
}

export async function parseConfig(
  text: string,
  configDir: string,
  env: Env = process.env,
  label = 'config',
  opts: LoadOptions = {},
): Promise<Omit<LoadedConfig, 'configPath'>> {
  const input = toInput(text, env, label, opts);
  const tenants = splitTenants(input, label);
  if (tenants === undefined) return validateInput(input, configDir, label, []);
  const wanted = opts.tenant;
  if (wanted === undefined && tenants.length > 1) {
    throw new ConfigError(`${label} lists ${tenants.length} tenants`, [`--tenant: pass one of ${tenants.map((t) => t.id).join(', ')}`]);
  }
  const picked = wanted === undefined ? tenants[0] : tenants.find((t) => t.id === wanted);
  if (!picked)
    throw new ConfigError(`${label} has no tenant ${JSON.stringify(wanted)}`, [
      `--tenant: expected one of ${tenants.map((t) => t.id).join(', ')}`,
    ]);
  return validateInput(picked.input, configDir, label, ['tenants', picked.index]);
}

/**
 * A multi-tenant file: `tenants: [{ tenant, platform, provisioning, audit, schedules }, …]`
 * plus shared top-level `state`, `redis`, `logging`, `daemon`. Each tenant is validated as a
 * complete single-tenant config (shared keys merged in), so every command works per tenant.
 */
function splitTenants(input: unknown, label: string): Array<{ id: string; index: number; input: Record<string, unknown> }> | undefined {
  if (typeof input !== 'object' || input === null || !('tenants' in input)) return undefined;
  const root = input as Record<string, unknown>;
  const issues: string[] = [];
  for (const key of Object.keys(root)) {
    if (key !== 'tenants' && !(SHARED_KEYS as readonly string[]).includes(key)) {
      issues.push(
        `${key}: not allowed at the top of a multi-tenant config; move it into each tenants[] entry (shared keys: ${SHARED_KEYS.join(', ')})`,
      );
    }
  }
  const list = root['tenants'];
  if (!Array.isArray(list) || list.length === 0) issues.push('tenants: must be a non-empty list of tenant configs');
  if (issues.length > 0) throw new ConfigError(`${label} is invalid`, issues);
  const shared = Object.fromEntries(SHARED_KEYS.filter((k) => k in root).map((k) => [k, root[k]]));
  const seen = new Set<string>();
  return (list as unknown[]).map((entry, index) => {
    if (typeof entry !== 'object' || entry === null)
      throw new ConfigError(`${label} is invalid`, [
        `tenants[${index}]: must be a mapping with tenant, platform, provisioning, audit, schedules`,
      ]);
    const id = (entry as Record<string, unknown>)['tenant'];
    if (typeof id !== 'string')
      throw new ConfigError(`${label} is invalid`, [`tenants[${index}].tenant: every tenant needs an id, e.g. tenant: acme-prod`]);
    if (seen.has(id)) throw new ConfigError(`${label} is invalid`, [`tenants[${index}].tenant: duplicate tenant id ${JSON.stringify(id)}`]);
    seen.add(id);
    return { id, index, input: { ...shared, ...(entry as Record<string, unknown>) } };
  });
}

async function validateInput(
  input: unknown,
  configDir: string,
  label: string,
  basePath: Array<string | number>,
): Promise<Omit<LoadedConfig, 'configPath'>> {
  const where = basePath.length > 0 ? `${basePath.map((p) => (typeof p === 'number' ? `[${p}]` : p)).join('')}.` : '';
  const parsed = configSchema.safeParse(input);
  if (!parsed.success) {
    throw new ConfigError(`${label} is invalid`, formatIssues(parsed.error.issues, { schema: configSchema, input, basePath }));
  }
  const config = parsed.data;

  const { files, issues } = await readFileRefs(configSchema, config, configDir);
  if (issues.length > 0) throw new ConfigError(`${label}: cannot read referenced files`, issues.map((i) => `${where}${i}`).sort());

  const token = config.platform.token !== undefined ? new Secret(config.platform.token, 'platform.token') : files.get('platform.tokenFile');
  // The schema guarantees one of the two; this guards against a schema edit breaking that.
  if (token === undefined)
    throw new ConfigError(`${label} is invalid`, [`${where}platform.token: set platform.token or platform.tokenFile`]);

  return {
    config: deepFreeze(config),
    configDir,
    secrets: Object.freeze({ platformToken: token, files }),
  };
}

/** Every tenant of a config file (one for a single-tenant file), each as a complete config. */
export async function parseAllTenants(
  text: string,
  configDir: string,
  env: Env = process.env,
  label = 'config',
  opts: Pick<LoadOptions, 'platformCredential'> = {},
): Promise<Array<Omit<LoadedConfig, 'configPath'>>> {
  const input = toInput(text, env, label, opts);
  const tenants = splitTenants(input, label);
  if (tenants === undefined) return [await validateInput(input, configDir, label, [])];
  return Promise.all(tenants.map((t) => validateInput(t.input, configDir, label, ['tenants', t.index])));
}

async function readConfigText(path: string): Promise<{ configPath: string; text: string }> {
  const configPath = resolve(path);
  try {
    return { configPath, text: await readFile(configPath, 'utf8') };
  } catch (e) {
    const code = (e as { code?: string }).code;
    const why =
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EACCES'
          ? 'permission denied'
          : code === 'EISDIR'
            ? 'is a directory'
            : (code ?? 'unreadable');
    throw new ConfigError(`cannot read config file ${configPath} (${why})`, [
      `--config: cannot read ${configPath} (${why}); pass the path of a YAML config file`,
    ]);
  }
}

export async function loadConfig(path: string, env: Env = process.env, opts: LoadOptions = {}): Promise<LoadedConfig> {
  const { configPath, text } = await readConfigText(path);
  const loaded = await parseConfig(text, dirname(configPath), env, configPath, opts);
  return Object.freeze({ ...loaded, configPath });
}

export async function loadAllTenants(
  path: string,
  env: Env = process.env,
  opts: Pick<LoadOptions, 'platformCredential'> = {},
): Promise<LoadedConfig[]> {
  const { configPath, text } = await readConfigText(path);
  const all = await parseAllTenants(text, dirname(configPath), env, configPath, opts);
  return all.map((l) => Object.freeze({ ...l, configPath }));
}
