/** The Quick start demo end to end: plan → apply → plan (no changes) → audit export into a file sink. */
import { spawnSync } from 'node:child_process';
import { cp, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
let dir: string | undefined;

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('demo', () => {
  it('provisions the example directory, converges to zero changes and exports the audit log', async () => {
    dir = await mkdtemp(join(tmpdir(), 'demo-'));
    // Same layout as the repository, so the config's ../../.demo-state stays inside the temp dir.
    await cp(join(root, 'config', 'examples'), join(dir, 'config', 'examples'), { recursive: true });
    const res = spawnSync(
      process.execPath,
      [join(root, 'bin', 'scim-audit-sync.mjs'), 'demo', '--config', join(dir, 'config', 'examples', 'config.demo.yaml')],
      {
        encoding: 'utf8',
        env: { ...process.env, NO_COLOR: '1' },
        timeout: 60_000,
      },
    );
    expect(res.status, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/succeeded: user\.create 45, group\.create 8, group\.members 8/);
    expect(res.stdout).toMatch(/platform now holds 45 users and 8 groups/);
    const again = res.stdout.split('== 3.')[1]?.split('== 4.')[0] ?? '';
    expect(again).toMatch(/No changes\. The platform matches the source\./);
    // Counts only in the second plan: no section heading with nothing under it.
    expect(again).toMatch(/^ {2}skipped: \d+ \(use --json to list them\)$/m);
    expect(again).not.toMatch(/^Skipped \(/m);
    expect(again).not.toContain('… and');
    const path = /audit events written to (.+)$/m.exec(res.stdout)?.[1];
    expect(path).toBe(join(dir, '.demo-state', 'audit', 'audit.ndjson'));
    const lines = (await readFile(path as string, 'utf8')).trim().split('\n');
    const read = Number(/events read (\d+)/.exec(res.stdout)?.[1]);
    expect(read).toBeGreaterThan(1000);
    expect(lines).toHaveLength(read);
    const keys = new Set(lines.map((l) => (JSON.parse(l) as { _key: string })._key));
    expect(keys.size).toBe(lines.length);
  });
});
