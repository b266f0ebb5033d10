/**
 * `ledger reassign` against the daemon's Redis ledger: the account's entry moves to the new
 * externalId (its deactivation time kept, the old id's index entry gone), entry by entry, and
 * the handover is recorded in the tenant's provisioning-log stream. Needs no platform token.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisLedger } from '../../src/jobs/redis-ledger.ts';
import { RedisProvisioningLogStore } from '../../src/provisioning-log/redis-store.ts';
import { runCli } from './run-cli.ts';

const prefix = `reassigntest${randomUUID().slice(0, 8)}`;
const redis = new Redis('redis://127.0.0.1:6379');
let dir: string;
let configPath: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ledger-reassign-'));
  configPath = join(dir, 'daemon.yaml');
  await writeFile(join(dir, 'directory.yaml'), 'users: []\ngroups: []\n');
  await writeFile(
    configPath,
    [
      'platform:',
      '  baseUrl: http://127.0.0.1:9',
      '  token: ${SCIM_TOKEN}',
      '  allowInsecureHttp: true',
      'state: { dir: ./state }',
      'provisioning:',
      '  source: { type: file, path: directory.yaml }',
      'redis:',
      '  url: redis://127.0.0.1:6379',
      `  keyPrefix: ${prefix}`,
      '',
    ].join('\n'),
  );
});
afterAll(async () => {
  const keys = await redis.keys(`*${prefix}*`);
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
  await rm(dir, { recursive: true, force: true });
});

describe('ledger reassign with the daemon ledger in Redis', () => {
  it('hands the account of emp-100 to emp-200 on purpose and records it in the provisioning-log stream', async () => {
    const ledger = new RedisLedger(redis, prefix, 'default');
    await ledger.save({
      version: 1,
      users: { 'acct-1': { externalId: 'emp-100', deactivatedAt: 1_700_000_000_000 }, 'acct-2': { externalId: 'emp-1' } },
      groups: {},
      pending: [],
    });

    const twice = await runCli(['ledger', 'reassign', '-c', configPath, '--from', 'emp-100', '--to', 'emp-1', '--reason', 'typo']);
    expect(twice.code).toBe(2);
    expect(twice.stderr).toContain('emp-1 already has an account in the ledger (acct-2)');
    const unknown = await runCli(['ledger', 'reassign', '-c', configPath, '--from', 'emp-999', '--to', 'emp-200', '--reason', 'x']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('the ledger has no account of emp-999');

    const run = await runCli(['ledger', 'reassign', '-c', configPath, '--from', 'emp-100', '--to', 'emp-200', '--reason', 'rehire, HR-12']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('reassigned account acct-1 of tenant default from emp-100 to emp-200 in redis:');

    const data = await ledger.load();
    expect(data?.users).toEqual({
      'acct-1': { externalId: 'emp-200', deactivatedAt: 1_700_000_000_000 },
      'acct-2': { externalId: 'emp-1' },
    });
    expect(await ledger.idFor('user', 'emp-200')).toBe('acct-1');
    expect(await ledger.idFor('user', 'emp-100')).toBeUndefined();

    const log = new RedisProvisioningLogStore(redis, prefix, 'default', { maxEntries: 1000, maxAgeMs: 86_400_000 });
    expect(await log.query({ user: 'emp-100', limit: 10 })).toEqual([
      expect.objectContaining({
        action: 'user.reassign',
        result: 'ok',
        object: { type: 'user', externalId: 'emp-200', id: 'acct-1' },
        changes: [{ path: 'externalId', before: 'emp-100', after: 'emp-200' }],
        reason: expect.stringContaining('rehire, HR-12'),
      }),
    ]);
  });
});
