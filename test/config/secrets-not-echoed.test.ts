/**
 * A config error names the key and the problem, never a secret's value: planted credentials
 * in every shape a config can hold them (a URL's password, an HTTP credential, a token, a JWT,
 * a private key, anything under a secret-named key) stay out of validate's output, while the
 * key path is still named and harmless values are still shown.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../cli/run-cli.ts';

const PLANTED = {
  redisPassword: 'RedisPw-7f3a9c',
  bearer: 'HecTok-51d0e2',
  header: 'HdrTok-88aa21',
  jwt: 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzdmMtc2NpbSJ9.c2lnbmF0dXJlLXNlY3JldA',
  urlPassword: 'UrlPw-2b7c11',
  nested: 'NestedPw-90fe33',
  pem: 'MIIEvQIBADANBgkqhkiG9w0BAQEFAASC',
};

function configFile(text: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'secret-echo-'));
  const path = join(dir, 'config.yaml');
  writeFileSync(path, text);
  writeFileSync(join(dir, 'users.yaml'), 'users: []\ngroups: []\n');
  return path;
}

async function validate(text: string): Promise<{ code: number; output: string }> {
  const r = await runCli(['validate', '--config', configFile(text)]);
  return { code: r.code, output: r.stdout + r.stderr };
}

function expectNoPlantedSecret(output: string): void {
  for (const [name, value] of Object.entries(PLANTED)) expect(output, `${name} echoed`).not.toContain(value);
}

describe('config errors never echo a secret', () => {
  it('names the keys but not the values of a URL password, an HTTP credential, a JWT and nested secrets', async () => {
    const { code, output } = await validate(
      [
        'tenant: t',
        'platform:',
        `  baseUrl: ftp://svc:${PLANTED.urlPassword}@acme.example.com`,
        `  token: [${PLANTED.jwt}]`,
        'provisioning:',
        '  source: { type: file, path: users.yaml }',
        'audit:',
        '  sinks:',
        `    - { name: s, type: http, url: "https://h.example.com", auth: "Bearer ${PLANTED.bearer}", headers: { Authorization: [ "${PLANTED.header}" ] } }`,
        `redis: "redis://:${PLANTED.redisPassword}@redis:6379"`,
        'daemon:',
        `  http: { port: "${PLANTED.jwt}" }`,
        `  ui: { credentials: { password: 5, note: "${PLANTED.nested}" } }`,
        `logging: { level: "-----BEGIN PRIVATE KEY-----${PLANTED.pem}" }`,
      ].join('\n'),
    );
    expect(code).toBe(2);
    expectNoPlantedSecret(output);
    expect(output).toContain('platform.baseUrl');
    expect(output).toContain('redis: expected a mapping');
    expect(output).toContain('redis://:[redacted]@redis:6379');
    expect(output).toContain('audit.sinks[0].auth');
    expect(output).toContain('daemon.http.port');
    expect(output).toContain('logging.level');
  });

  it('still shows a harmless wrong value so the fix is obvious', async () => {
    const { code, output } = await validate('platform: { baseUrl: https://acme.example.com, token: x }\nlogging: { level: verbose }\n');
    expect(code).toBe(2);
    expect(output).toContain('logging.level');
    expect(output).toContain('"verbose"');
  });

  it('describes the Redis the daemon will use: the sentinel or cluster nodes, not the ignored url', async () => {
    const base = 'platform: { baseUrl: https://acme.example.com, token: x }\nprovisioning:\n  source: { type: file, path: users.yaml }\n';
    const sentinel = await runCli([
      'validate',
      '--config',
      configFile(`${base}redis:\n  sentinel: { name: mymaster, nodes: [ { host: s1, port: 26379 }, { host: s2, port: 26379 } ] }\n`),
    ]);
    expect(sentinel.code, sentinel.stderr).toBe(0);
    expect(sentinel.stdout).toContain('redis sentinel master "mymaster" via s1:26379,s2:26379');
    expect(sentinel.stdout).not.toContain('redis://');
    const cluster = await runCli([
      'validate',
      '--config',
      configFile(`${base}redis:\n  cluster: { nodes: [ { host: c1, port: 7000 }, { host: c2, port: 7001 } ] }\n`),
    ]);
    expect(cluster.stdout).toContain('redis cluster c1:7000,c2:7001');
    expect(cluster.stdout).not.toContain('redis://');
  });
});
