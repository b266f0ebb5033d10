import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AUTH_MESSAGES } from '../../src/errors.ts';
import { runCli, startFakePlatform, type FakePlatform } from './run-cli.ts';

const TOKEN = 'tok-3f9a7c1e5b2d';
const dir = mkdtempSync(join(tmpdir(), 'scimsync-validate-'));
let platform: FakePlatform;

beforeAll(async () => {
  platform = await startFakePlatform();
  writeFileSync(join(dir, 'token'), `${TOKEN}\n`);
  writeFileSync(
    join(dir, 'directory.yaml'),
    'users:\n  - { externalId: u-1, userName: ann }\n  - { externalId: u-2, userName: bob }\ngroups:\n  - { externalId: g-1, displayName: Team, members: [u-1, u-2] }\n',
  );
});
afterAll(async () => {
  await platform.close();
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => {
  platform.seen.length = 0;
  platform.routes.clear();
});

let n = 0;
function config(yaml: string): string {
  const file = join(dir, `config-${++n}.yaml`);
  writeFileSync(file, yaml);
  return file;
}

/** A valid config for the fake platform; the token comes from a file with a trailing newline. */
const good = (extra = '') =>
  config(
    `platform:\n  baseUrl: ${platform.url}\n  tokenFile: token\n  allowInsecureHttp: true\n  retry: { baseDelayMs: 1, maxDelayMs: 5 }\nprovisioning:\n  source: { type: file, path: directory.yaml }\n${extra}`,
  );

// Independent child processes: run side by side to keep the file fast.
describe.concurrent('validate: configuration errors exit 2 with messages naming the key', () => {
  it('reports a typo, a bad URL and an unknown source type together', async ({ expect }) => {
    const r = await runCli([
      'validate',
      '--config',
      config('platform:\n  baseUrl: ftp:/x\n  tokn: abc\n  token: x\nprovisioning:\n  source: { type: ldapp }\n'),
    ]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('error [E_CONFIG_INVALID]');
    expect(r.stderr).toContain('  - platform.baseUrl: must be a URL like https://acme.example.com (got "ftp:/x")');
    expect(r.stderr).toContain('  - platform.tokn: unknown key — did you mean "token"?');
    expect(r.stderr).toMatch(/ {2}- provisioning\.source\.type: unknown source type "ldapp"; expected one of: .*\bfile\b/);
    expect(r.stderr).not.toContain('    at '); // no stack trace without --debug
  });

  it('refuses http:// to a non-loopback host even with allowInsecureHttp', async ({ expect }) => {
    const r = await runCli([
      'validate',
      '-c',
      config('platform:\n  baseUrl: http://scim.example.com\n  token: x\n  allowInsecureHttp: true\n'),
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('platform.baseUrl: plain http:// is allowed only for loopback hosts, not scim.example.com');
  });

  it('names the key and the variable when an environment variable is missing', async ({ expect }) => {
    const r = await runCli(['validate', '-c', config('platform:\n  baseUrl: https://acme.example.com\n  token: ${SCIM_TOKEN}\n')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/platform\.token: environment variable SCIM_TOKEN is not set/);
  });

  it('prints the issues as JSON on stdout with --json', async ({ expect }) => {
    const r = await runCli([
      'validate',
      '--json',
      '-c',
      config('platform:\n  baseUrl: https://acme.example.com\n  tokn: abc\n  token: x\n'),
    ]);
    expect(r.code).toBe(2);
    const out = JSON.parse(r.stdout) as { ok: boolean; error: { code: string; issues: string[] } };
    expect(out.ok).toBe(false);
    expect(out.error.code).toBe('E_CONFIG_INVALID');
    expect(out.error.issues).toEqual(['platform.tokn: unknown key — did you mean "token"?']);
  });

  it('treats usage errors (missing --config, unknown command) as exit 2', async ({ expect }) => {
    const missing = await runCli(['validate']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("required option '-c, --config <file>' not specified");
    const unknown = await runCli(['valdate']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("unknown command 'valdate'");
  });

  it('reads the config path from SCIM_AUDIT_SYNC_CONFIG', async ({ expect }) => {
    const r = await runCli(['validate'], {
      SCIM_AUDIT_SYNC_CONFIG: config('platform:\n  baseUrl: https://acme.example.com\n  token: x\n'),
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('config is valid');
  });
});

describe('validate: a valid config', () => {
  it('prints a summary with the token redacted and exits 0, without calling the platform', async () => {
    const r = await runCli(['validate', '--config', good()]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('config is valid');
    expect(r.stdout).toMatch(/credential\s+Bearer token from platform\.tokenFile .* \[redacted\]/);
    expect(r.stdout).toContain('source       file path=directory.yaml');
    expect(r.stdout + r.stderr).not.toContain(TOKEN);
    expect(platform.seen).toEqual([]);
  });

  it('prints the effective config as JSON with secrets redacted', async () => {
    const r = await runCli([
      'validate',
      '--json',
      '-c',
      config(`platform:\n  baseUrl: https://acme.example.com\n  token: ${TOKEN}\nredis:\n  url: redis://scim:hunter22@redis:6379\n`),
    ]);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as {
      ok: boolean;
      config: { platform: { token: string; retry: { maxAttempts: number } }; redis: { url: string } };
    };
    expect(out.ok).toBe(true);
    expect(out.config.platform.token).toBe('[redacted]');
    expect(out.config.platform.retry.maxAttempts).toBe(6);
    expect(out.config.redis.url).toBe('redis://scim:[redacted]@redis:6379');
    expect(r.stdout).not.toContain(TOKEN);
    expect(r.stdout).not.toContain('hunter22');
  });
});

describe('validate --check-connectivity', () => {
  it('reports ok when ServiceProviderConfig answers 200, sending the token from the file', async () => {
    platform.routes.set('/api/scim/v2/ServiceProviderConfig', {
      status: 200,
      body: { patch: { supported: true }, filter: { supported: true, maxResults: 200 } },
    });
    const r = await runCli(['validate', '--check-connectivity', '-c', good()]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/platform +ok .*ServiceProviderConfig read; PATCH supported, filter supported \(maxResults 200\)/);
    expect(r.stdout).toMatch(/source +ok +file:directory\.yaml: 2 users, 1 groups/);
    expect(platform.seen).toEqual([{ method: 'GET', url: '/api/scim/v2/ServiceProviderConfig', authorization: `Bearer ${TOKEN}` }]);
    expect(r.stdout + r.stderr).not.toContain(TOKEN);
  });

  it('falls back to GET /Users?count=1 when ServiceProviderConfig is 404', async () => {
    platform.routes.set('/api/scim/v2/Users', { status: 200, body: { schemas: [], totalResults: 42, Resources: [] } });
    const r = await runCli(['validate', '--check-connectivity', '-c', good()]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/platform +ok .*Users readable \(totalResults 42\)/);
    expect(platform.seen.map((s) => s.url)).toEqual(['/api/scim/v2/ServiceProviderConfig', '/api/scim/v2/Users?count=1']);
  });

  it('explains a 401 and exits 2, as the README promises', async () => {
    platform.routes.set('/api/scim/v2/ServiceProviderConfig', { status: 401, body: { error: 'unauthorized' } });
    const r = await runCli(['validate', '--check-connectivity', '-c', good()]);
    expect(r.code).toBe(2);
    expect(r.stdout).toMatch(/platform +failed +\[E_AUTH_INVALID\]/);
    expect(r.stdout).toContain(AUTH_MESSAGES[401]);
    expect(r.stdout).toMatch(/source +ok/);
    // 401 is not retried: exactly one request.
    expect(platform.seen).toHaveLength(1);
  });

  it('explains a 403 and exits 2', async () => {
    platform.routes.set('/api/scim/v2/ServiceProviderConfig', { status: 403, body: { error: 'key scoped to other deployments' } });
    const r = await runCli(['validate', '--check-connectivity', '--json', '-c', good()]);
    expect(r.code).toBe(2);
    const out = JSON.parse(r.stdout) as { ok: boolean; checks: { name: string; ok: boolean; code?: string; detail: string }[] };
    expect(out.ok).toBe(false);
    const check = out.checks.find((c) => c.name === 'platform');
    expect(check?.code).toBe('E_AUTH_FORBIDDEN');
    expect(check?.detail).toContain(AUTH_MESSAGES[403]);
    expect(check?.detail).toContain('key scoped to other deployments');
    expect(r.stdout).not.toContain(TOKEN);
  });

  it('retries a 503 once (maxAttempts 2 for the probe) and then reports it', async () => {
    platform.routes.set('/api/scim/v2/ServiceProviderConfig', { status: 503 });
    const r = await runCli(['validate', '--check-connectivity', '-c', good()]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('[E_TRANSIENT]');
    expect(platform.seen).toHaveLength(2);
  });

  it('refuses a source file that does not exist before any probe (exit 2, the key named)', async () => {
    const file = config(
      `platform:\n  baseUrl: ${platform.url}\n  token: x\n  allowInsecureHttp: true\nprovisioning:\n  source: { type: file, path: nowhere.yaml }\n`,
    );
    const r = await runCli(['validate', '--check-connectivity', '-c', file]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/provisioning\.source\.path: .*nowhere\.yaml does not exist/);
    expect(platform.seen).toHaveLength(0);
  });

  it('reports a source that cannot be read, still checking the platform', async () => {
    platform.routes.set('/api/scim/v2/ServiceProviderConfig', { status: 200, body: {} });
    const file = config(
      `platform:\n  baseUrl: ${platform.url}\n  token: x\n  allowInsecureHttp: true\nprovisioning:\n  source: { type: file, path: broken.yaml }\n`,
    );
    writeFileSync(join(dirname(file), 'broken.yaml'), 'users: [ { userName: a@example.com\n');
    const r = await runCli(['validate', '--check-connectivity', '-c', file]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/platform +ok/);
    expect(r.stdout).toMatch(/source +failed +\[E_SOURCE_FAILED\] file:broken\.yaml/);
  });
});
