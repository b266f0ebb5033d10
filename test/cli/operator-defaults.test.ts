/**
 * Operator commands on a config with one tenant need no `--tenant` (the only tenant is meant);
 * with several tenants they name the choices. `status` shows queue depths as readable lines,
 * `status --json` keeps the exact counts.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from './run-cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'scimsync-operator-defaults-'));
const prefix = `opdef${randomUUID().slice(0, 8)}`;
const tenantLines = (id: string): string[] => [
  `  - tenant: ${id}`,
  '    platform:',
  '      baseUrl: https://acme.example.com',
  '      token: not-needed-by-operator-commands',
];
const write = (name: string, tenants: string[]): string => {
  const path = join(dir, name);
  writeFileSync(
    path,
    ['redis:', '  url: redis://127.0.0.1:6379', `  keyPrefix: ${prefix}`, 'tenants:', ...tenants.flatMap(tenantLines), ''].join('\n'),
  );
  return path;
};
const single = write('single.yaml', ['solo']);
const several = write('several.yaml', ['alpha', 'beta']);

afterAll(async () => {
  const redis = new Redis('redis://127.0.0.1:6379');
  const keys = await redis.keys(`*${prefix}*`);
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
  rmSync(dir, { recursive: true, force: true });
});

describe('operator command defaults', () => {
  it('one tenant in the config: approve-deletes and resume act on it without --tenant', async () => {
    const approve = await runCli(['approve-deletes', '-c', single]);
    expect(approve.code, approve.stderr).toBe(0);
    expect(approve.stdout).toContain('tenant solo has no deletions held');
    const resume = await runCli(['resume', '-c', single]);
    expect(resume.code, resume.stderr).toBe(0);
    expect(resume.stdout).toContain('tenant solo was not quarantined');
  });

  it('several tenants and no --tenant: a usage error (exit 2) that names them', async () => {
    const r = await runCli(['approve-deletes', '-c', several]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('the config has 2 tenants');
    expect(r.stderr).toContain('--tenant: one of alpha, beta');
  });

  it('status renders the queues as lines; --json keeps the counts', async () => {
    const human = await runCli(['status', '-c', single]);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).not.toContain('{"');
    expect(human.stdout).toMatch(/^queues:$/m);
    expect(human.stdout).toMatch(/^ {2}reconcile: +waiting \d+, active \d+, delayed \d+, failed \d+, completed \d+$/m);
    const json = await runCli(['status', '--json', '-c', single]);
    const doc = JSON.parse(json.stdout) as { queues: Record<string, Record<string, number>> };
    expect(Object.keys(doc.queues).sort()).toEqual(['apply', 'audit', 'reconcile']);
    expect(doc.queues['reconcile']).toEqual({
      waiting: expect.any(Number),
      active: 0,
      delayed: 0,
      failed: 0,
      completed: expect.any(Number),
    });
  });
});
