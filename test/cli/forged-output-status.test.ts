/**
 * `status` shows what the daemon recorded (a quarantine reason quoting a server's message, the
 * deletion guard's reasons) escaped: a value cannot clear the operator's terminal or print a line
 * of its own. Real Redis, real CLI.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { TenantState } from '../../src/jobs/tenant-state.ts';
import { runCli } from './run-cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'scimsync-status-forged-'));
const prefix = `forged${randomUUID().slice(0, 8)}`;
const configPath = join(dir, 'config.yaml');
writeFileSync(
  configPath,
  [
    'redis:',
    '  url: redis://127.0.0.1:6379',
    `  keyPrefix: ${prefix}`,
    'tenant: acme',
    'platform:',
    '  baseUrl: https://acme.example.com',
    '  token: not-used',
    '',
  ].join('\n'),
);
const redis = new Redis('redis://127.0.0.1:6379');

afterAll(async () => {
  const keys = await redis.keys(`*${prefix}*`);
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
  rmSync(dir, { recursive: true, force: true });
});

describe('status', () => {
  it('a quarantine reason and guard reasons holding escape sequences and CR/LF are shown escaped; --json keeps them', async () => {
    const state = new TenantState(redis, prefix, 'acme');
    const reason = 'PATCH Users/1: 400 \u001b]0;pwned\u0007\u001b[2J\r\nquarantine: no';
    await state.recordFailure(reason, {
      maxConsecutiveFailures: 1,
      failureRatePercent: 50,
      minOperations: 10,
      baseBackoffMinutes: 5,
      maxBackoffHours: 1,
    });
    await state.setHeldDeletes({
      count: 3,
      reasons: ['would remove Eve\u202e\u2066 (3 of 4)\nheld deletes: none'],
      at: Date.now(),
      runId: 'r-1',
    });

    const r = await runCli(['status', '-c', configPath]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
    expect(r.stdout).toContain('PATCH Users/1: 400 \\x1b]0;pwned\\x07\\x1b[2J\\r\\nquarantine: no');
    expect(r.stdout).toContain('would remove Eve\\u202e\\u2066 (3 of 4)\\nheld deletes: none');
    expect(r.stdout).not.toMatch(/^quarantine: no/m);
    expect(r.stdout).not.toMatch(/^held deletes: none/m);

    const json = await runCli(['status', '--json', '-c', configPath]);
    const doc = JSON.parse(json.stdout) as { tenants: Array<{ quarantine: { reason: string } }> };
    expect(doc.tenants[0]?.quarantine.reason).toBe(reason);
  });
});
