import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig, parseConfig } from '../../src/config/load.ts';
import { resolveConfigPath } from '../../src/config/paths.ts';
import { ConfigError } from '../../src/errors.ts';

const dir = mkdtempSync(join(tmpdir(), 'scimsync-load-'));
mkdirSync(join(dir, 'sub'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
function writeConfig(yaml: string, subdir = ''): string {
  const d = join(dir, subdir);
  mkdirSync(d, { recursive: true });
  const file = join(d, `config-${++n}.yaml`);
  writeFileSync(file, yaml);
  return file;
}

async function issuesOf(promise: Promise<unknown>): Promise<string[]> {
  try {
    await promise;
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as ConfigError).issues;
  }
  throw new Error('expected a ConfigError');
}

const base = (extra = '') => `platform:\n  baseUrl: https://acme.example.com\n  token: t0k3n-value\n${extra}`;

describe('environment substitution', () => {
  it('fills ${VAR} and ${VAR:-default}, keeps $${X} literal, and types unquoted whole references', async () => {
    const { config, secrets } = await parseConfig(
      [
        'tenant: ${TENANT}',
        'platform:',
        '  baseUrl: https://${HOST:-default.example.com}/',
        '  token: ${TOKEN}',
        '  timeoutSeconds: ${TIMEOUT:-15}',
        '  allowInsecureHttp: ${INSECURE:-false}',
        '  scimPath: /x/$${NOT_A_VAR}',
        'provisioning:',
        '  source: { type: file, path: "${DIR:-data}/users.yaml" }',
        '  scope: { users: "userName sw \\"${PREFIX:-}\\"" }',
      ].join('\n'),
      dir,
      { TENANT: 'acme', TOKEN: '12345', TIMEOUT: '', HOST: 'acme.example.com' },
    );
    expect(config.tenant).toBe('acme');
    expect(config.platform.baseUrl).toBe('https://acme.example.com/');
    // An empty variable takes the default, like the shell's ${VAR:-default}.
    expect(config.platform.timeoutSeconds).toBe(15);
    expect(config.platform.allowInsecureHttp).toBe(false);
    expect(config.platform.scimPath).toBe('/x/${NOT_A_VAR}');
    expect(config.provisioning?.source).toMatchObject({ type: 'file', path: 'data/users.yaml' });
    expect(config.provisioning?.scope.users).toBe('userName sw ""');
    // A secret-named key stays a string even when its value looks like a number.
    expect(secrets.platformToken.reveal()).toBe('12345');
  });

  it('keeps a quoted reference a string (so the schema can say what it wants)', async () => {
    const issues = await issuesOf(parseConfig(base('  timeoutSeconds: "${T}"\n'), dir, { T: '30' }));
    expect(issues).toEqual(['platform.timeoutSeconds: expected a number, got "30" — remove the quotes']);
  });

  it('reports every missing variable with its key path, the variable and the line', async () => {
    const issues = await issuesOf(
      parseConfig('platform:\n  baseUrl: ${PLATFORM_URL}\n  token: ${SCIM_TOKEN}\nstate:\n  dir: ${STATE_DIR:-/tmp/x}\n', dir, {}),
    );
    expect(issues).toHaveLength(2);
    expect(issues[0]).toMatch(/^platform\.baseUrl: environment variable PLATFORM_URL is not set; .*\(line 2\)$/);
    expect(issues[1]).toMatch(/^platform\.token: environment variable SCIM_TOKEN is not set; .*\(line 3\)$/);
  });

  it('refuses a malformed reference', async () => {
    const issues = await issuesOf(parseConfig(base('tenant: ${not valid}\n'), dir, {}));
    expect(issues[0]).toMatch(/^tenant: malformed reference \$\{not valid\}/);
  });

  it('never lets a variable inject YAML structure', async () => {
    const { config } = await parseConfig(base('  scimPath: ${P}\n'), dir, { P: '/api\nmaxConnections: 1 # x' });
    // Substitution happens after parsing: the value stays one string, it adds no keys.
    expect(config.platform.scimPath).toBe('/api\nmaxConnections: 1 # x');
    expect(config.platform.maxConnections).toBe(32);
  });
});

describe('secret files', () => {
  it('reads tokenFile relative to the config file, trimming exactly one trailing newline', async () => {
    writeFileSync(join(dir, 'sub', 'token.txt'), 'file-token-1\n');
    writeFileSync(join(dir, 'sub', 'redis.pw'), 'pw-with-crlf\r\n');
    const path = writeConfig(
      'platform:\n  baseUrl: https://acme.example.com\n  tokenFile: token.txt\nredis:\n  passwordFile: ./redis.pw\n',
      'sub',
    );
    const loaded = await loadConfig(path, {});
    expect(loaded.configDir).toBe(join(dir, 'sub'));
    expect(loaded.secrets.platformToken.reveal()).toBe('file-token-1');
    expect(loaded.secrets.platformToken.source).toBe('platform.tokenFile');
    expect(loaded.secrets.files.get('redis.passwordFile')?.reveal()).toBe('pw-with-crlf');
  });

  it('keeps any further newline (only one is trimmed), which the HTTP client then refuses', async () => {
    writeFileSync(join(dir, 'two-newlines.txt'), 'tok\n\n');
    const loaded = await loadConfig(writeConfig('platform:\n  baseUrl: https://a.example.com\n  tokenFile: two-newlines.txt\n'), {});
    expect(loaded.secrets.platformToken.reveal()).toBe('tok\n');
  });

  it('names the key and the resolved path of an unreadable or empty file, never content', async () => {
    writeFileSync(join(dir, 'empty.txt'), '\n');
    const issues = await issuesOf(
      loadConfig(
        writeConfig('platform:\n  baseUrl: https://a.example.com\n  tokenFile: nope/token\nredis:\n  passwordFile: empty.txt\n'),
        {},
      ),
    );
    expect(issues).toEqual([
      `platform.tokenFile: cannot read ${join(dir, 'nope/token')} (no such file)`,
      `redis.passwordFile: ${join(dir, 'empty.txt')} is empty`,
    ]);
  });

  it('hands the token out as a Secret that prints as [redacted]', async () => {
    const { secrets } = await parseConfig(base(), dir, {});
    const token = secrets.platformToken;
    expect(token.reveal()).toBe('t0k3n-value');
    for (const text of [String(token), `${token}`, JSON.stringify({ token }), inspect(token), inspect({ secrets })]) {
      expect(text).not.toContain('t0k3n-value');
      expect(text).toContain('[redacted]');
    }
  });

  it('requires exactly one of token and tokenFile', async () => {
    const issues = await issuesOf(parseConfig('platform:\n  baseUrl: https://a.example.com\n', dir, {}));
    expect(issues).toEqual([
      'platform.token: set exactly one of platform.token (e.g. "${SCIM_TOKEN}") or platform.tokenFile (a mounted secret file)',
    ]);
  });
});

describe('loaded config', () => {
  it('is deep-frozen, with defaults applied', async () => {
    const { config } = await parseConfig(base(), dir, {});
    expect(config.platform.retry.maxAttempts).toBe(6);
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.platform.retry)).toBe(true);
    expect(() => {
      (config.platform.retry as { maxAttempts: number }).maxAttempts = 1;
    }).toThrow(TypeError);
  });

  it('resolves relative paths against the config directory, absolute ones as they are', () => {
    expect(resolveConfigPath('/etc/scim', 'directory.yaml')).toBe('/etc/scim/directory.yaml');
    expect(resolveConfigPath('/etc/scim', '../data/d.yaml')).toBe('/etc/data/d.yaml');
    expect(resolveConfigPath('/etc/scim', '/srv/d.yaml')).toBe('/srv/d.yaml');
  });

  it('reports a missing config file as a config error naming the path', async () => {
    const issues = await issuesOf(loadConfig(join(dir, 'missing.yaml'), {}));
    expect(issues[0]).toContain(`cannot read ${join(dir, 'missing.yaml')} (no such file)`);
  });

  it('reports YAML syntax errors with line and column', async () => {
    const issues = await issuesOf(parseConfig('platform:\n  baseUrl: [unclosed\n  token: x\n', dir, {}));
    expect(issues[0]).toMatch(/^line \d+, column \d+: /);
  });

  it('loads the shipped examples', async () => {
    const examples = join(import.meta.dirname, '../../config/examples');
    const main = await loadConfig(join(examples, 'config.yaml'), { SCIM_TOKEN: 'example' });
    expect(main.config.provisioning?.source).toEqual({ type: 'file', path: 'directory.yaml' });
    const demo = await loadConfig(join(examples, 'config.demo.yaml'), { SIM_URL: 'http://127.0.0.1:4010', SIM_TOKEN: 'sim' });
    expect(demo.config.platform.allowInsecureHttp).toBe(true);
    expect(resolveConfigPath(demo.configDir, demo.config.state.dir)).toBe(join(examples, '../../.demo-state'));
  });
});
