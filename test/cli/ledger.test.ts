/**
 * Moving from one-shot to the daemon keeps what the tool manages: `ledger export` / `ledger
 * import` between state.dir and Redis, the daemon's one-time import of a state.dir ledger, the
 * managed count in `status`, and the warning when every match is skipped as unmanaged.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.ts';
import { importOneShotLedgers } from '../../src/cli/ledger-auto-import.ts';
import { RedisLedger } from '../../src/jobs/redis-ledger.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { startSimulator, type Simulator } from '../../src/simulator/index.ts';
import { runCli } from './run-cli.ts';

const TOKEN = 'ledger-tok';
const prefix = `ledgertest${randomUUID().slice(0, 8)}`;
let sim: Simulator;
let dir: string;
let oneShot: string;
let withRedis: string;
const redis = new Redis('redis://127.0.0.1:6379');

beforeAll(async () => {
  sim = await startSimulator({ tokens: [{ token: TOKEN }] });
  dir = await mkdtemp(join(tmpdir(), 'ledger-cli-'));
  await writeFile(
    join(dir, 'directory.yaml'),
    'users:\n  - { externalId: u-1, userName: ann@example.com }\n  - { externalId: u-2, userName: bob@example.com }\ngroups:\n  - { externalId: g-1, displayName: Sales, members: [u-1] }\n',
  );
  const base = [
    'platform:',
    `  baseUrl: ${sim.url}`,
    '  token: ${SCIM_TOKEN}',
    '  allowInsecureHttp: true',
    'state: { dir: ./state }',
    'provisioning:',
    '  source: { type: file, path: directory.yaml }',
    '',
  ].join('\n');
  oneShot = join(dir, 'one-shot.yaml');
  withRedis = join(dir, 'daemon.yaml');
  await writeFile(oneShot, base);
  await writeFile(withRedis, `${base}redis:\n  url: redis://127.0.0.1:6379\n  keyPrefix: ${prefix}\n`);
});
afterAll(async () => {
  const keys = await redis.keys(`*${prefix}*`);
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
  await sim.close();
  await rm(dir, { recursive: true, force: true });
});

describe('one-shot to daemon: the ledger moves with you', () => {
  it('ledger import copies state.dir into Redis (without the platform token), refuses to overwrite, and export reads it back', async () => {
    expect((await runCli(['apply', '-c', oneShot], { SCIM_TOKEN: TOKEN })).code).toBe(0);
    const fileLedger = JSON.parse(await readFile(join(dir, 'state', 'default', 'ledger.json'), 'utf8')) as {
      users: Record<string, unknown>;
      groups: Record<string, unknown>;
    };
    expect(Object.keys(fileLedger.users)).toHaveLength(2);

    const imported = await runCli(['ledger', 'import', '-c', withRedis]);
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stdout).toMatch(
      /^imported 2 users, 1 groups, 0 pending creates of tenant default from file:.*ledger\.json into redis:/,
    );
    const again = await runCli(['ledger', 'import', '-c', withRedis]);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('already holds 2 users, 1 groups, 0 pending creates; nothing imported');

    const exported = await runCli(['ledger', 'export', '-c', withRedis]);
    expect(exported.code, exported.stderr).toBe(0);
    const out = JSON.parse(exported.stdout) as {
      kind: string;
      tenant: string;
      ledger: { users: Record<string, unknown>; groups: Record<string, unknown> };
    };
    expect(out.kind).toBe('scim-audit-sync/ledger');
    expect(out.ledger.users).toEqual(fileLedger.users);
    expect(out.ledger.groups).toEqual(fileLedger.groups);

    const status = await runCli(['status', '-c', withRedis]);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain('  managed:   2 users, 1 groups');
  });

  it('a lost state.dir: every match is skipped as unmanaged, and the run says so; importing the export restores ownership', async () => {
    const exportFile = join(dir, 'ledger-export.json');
    expect((await runCli(['ledger', 'export', '-c', oneShot, '--out', exportFile])).code).toBe(0);
    await rm(join(dir, 'state'), { recursive: true, force: true });
    const plan = await runCli(['plan', '-c', oneShot, '--json'], { SCIM_TOKEN: TOKEN });
    expect(plan.code).toBe(0);
    expect((JSON.parse(plan.stdout) as { skipped: Array<{ code?: string }> }).skipped.filter((k) => k.code === 'unmanaged')).toHaveLength(
      3,
    );
    expect(plan.stderr).toContain(
      '3 source objects (2 users, 1 groups) match platform objects this tool does not manage, and the ownership ledger',
    );
    expect(plan.stderr).toContain('scim-audit-sync ledger import');

    const restore = await runCli(['ledger', 'import', '-c', oneShot, '--in', exportFile]);
    expect(restore.code, restore.stderr).toBe(0);
    const after = await runCli(['plan', '-c', oneShot, '--json'], { SCIM_TOKEN: TOKEN });
    expect(JSON.parse(after.stdout) as { skipped: unknown[]; summary: { changes: number } }).toMatchObject({
      skipped: [],
      summary: { changes: 0 },
    });
    expect(after.stderr).not.toContain('does not manage');
  });

  it('daemon start imports a state.dir ledger into an empty Redis ledger once, and never over a ledger it keeps', async () => {
    const tenantPrefix = `${prefix}auto`;
    const file = join(dir, 'auto.yaml');
    await writeFile(file, (await readFile(withRedis, 'utf8')).replace(`keyPrefix: ${prefix}`, `keyPrefix: ${tenantPrefix}`));
    const loaded = await loadConfig(file, { SCIM_TOKEN: TOKEN });
    const logger = createLogger({ level: 'silent' });
    expect(await importOneShotLedgers([loaded], logger)).toBe(1);
    const ledger = new RedisLedger(redis, tenantPrefix, 'default');
    expect(await ledger.counts()).toEqual({ users: 2, groups: 1, pending: 0 });
    // The daemon forgets one object; a restart must not bring the old state back.
    const [someId] = Object.keys((await ledger.load())!.users);
    await ledger.forget('user', someId!);
    expect(await importOneShotLedgers([loaded], logger)).toBe(0);
    expect(await ledger.counts()).toEqual({ users: 1, groups: 1, pending: 0 });
  });
});
