/**
 * `status`, `trigger`, `resume`, `approve-deletes` and `log` read or write Redis only: an operator's
 * shell without the platform credential (unset ${SCIM_TOKEN}, no mounted token file) can run them.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from './run-cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'scimsync-operator-'));
const prefix = `optest${randomUUID().slice(0, 8)}`;
const configPath = join(dir, 'config.yaml');
const tenant = (id: string, tokenLine: string) =>
  [`  - tenant: ${id}`, '    platform:', '      baseUrl: https://acme.example.com', `      ${tokenLine}`].join('\n');
writeFileSync(
  configPath,
  [
    'redis:',
    '  url: redis://127.0.0.1:6379',
    `  keyPrefix: ${prefix}`,
    'tenants:',
    tenant('alpha', 'token: ${SCIM_TOKEN}'),
    tenant('beta', 'tokenFile: /run/secrets/not-mounted'),
    '',
  ].join('\n'),
);

afterAll(async () => {
  const redis = new Redis('redis://127.0.0.1:6379');
  const keys = await redis.keys(`*${prefix}*`);
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
  rmSync(dir, { recursive: true, force: true });
});

describe('operator commands do not need the platform token', () => {
  it('status, trigger, resume, approve-deletes and log run with neither ${SCIM_TOKEN} nor the token file', async () => {
    const status = await runCli(['status', '--json', '-c', configPath]);
    expect(status.code, status.stderr).toBe(0);
    expect((JSON.parse(status.stdout) as { tenants: Array<{ tenant: string }> }).tenants.map((t) => t.tenant)).toEqual(['alpha', 'beta']);
    const trigger = await runCli(['trigger', 'audit', '-c', configPath, '--tenant', 'beta']);
    expect(trigger.code, trigger.stderr).toBe(0);
    expect(trigger.stdout).toMatch(/audit run for tenant beta enqueued/);
    const resume = await runCli(['resume', '-c', configPath, '--tenant', 'alpha']);
    expect(resume.code, resume.stderr).toBe(0);
    const approve = await runCli(['approve-deletes', '-c', configPath, '--tenant', 'alpha']);
    expect(approve.code, approve.stderr).toBe(0);
    expect(approve.stdout).toContain('no deletions held');
    // The provisioning log is read from Redis too.
    const log = await runCli(['log', '--json', '-c', configPath, '--tenant', 'beta']);
    expect(log.code, log.stderr).toBe(0);
  });

  it('a command that calls the platform still requires the token (exit 2, naming the variable)', async () => {
    const r = await runCli(['plan', '-c', configPath, '--tenant', 'alpha']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('environment variable SCIM_TOKEN is not set');
  });
});
