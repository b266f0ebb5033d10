/**
 * `watch --config F`: the change path in the foreground without Redis. A full reconcile
 * first, then a joiner edited into the file source reaches the platform while it runs;
 * Ctrl-C stops it cleanly (exit 0). A source that cannot report changes is a config error.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import {
  BIN,
  baseConfig,
  merge,
  people,
  startSim,
  SIM_TOKEN,
  usersNamed,
  type ConfigPatch,
  type Directory,
} from '../helpers/reconcile-harness.ts';
import { waitFor } from '../helpers/daemon-harness.ts';
import type { Simulator } from '../../src/simulator/index.ts';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function workspace(
  s: Simulator,
  config: ConfigPatch = {},
): { dir: string; writeDirectory(d: Directory): void; env: Record<string, string> } {
  const dir = mkdtempSync(join(tmpdir(), 'watch-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(
    join(dir, 'config.yaml'),
    stringify(
      merge(
        baseConfig(),
        merge({ logging: { level: 'info' }, provisioning: { changes: { pollIntervalMs: 200, coalesceMs: 100 } } }, config),
      ),
    ),
  );
  return {
    dir,
    writeDirectory: (d) => writeFileSync(join(dir, 'directory.yaml'), stringify(d)),
    env: { PATH: process.env['PATH'] ?? '', NO_COLOR: '1', SIM_URL: s.url, SIM_TOKEN },
  };
}

describe('watch', () => {
  it('a joiner edited into the file source reaches the platform while watch runs; Ctrl-C stops it with exit 0', async () => {
    const s = await startSim();
    cleanups.push(() => s.close());
    const ws = workspace(s);
    ws.writeDirectory({ users: people(1, 2), groups: [{ externalId: 'g-1', displayName: 'Team', members: ['u-1'] }] });
    const child = spawn(process.execPath, [BIN, 'watch', '--config', 'config.yaml'], { cwd: ws.dir, env: ws.env });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    cleanups.push(() => void child.kill('SIGKILL'));
    await waitFor(() => s.store.users().length === 2, 'the initial full reconcile', 20_000);
    await waitFor(() => stderr.includes('watch: full reconcile finished'), 'the full reconcile log line');
    ws.writeDirectory({ users: people(1, 3), groups: [{ externalId: 'g-1', displayName: 'Team', members: ['u-1', 'u-3'] }] });
    await waitFor(() => usersNamed(s, 'user3@example.com') === 1, 'the joiner on the platform', 15_000);
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(stderr).toContain('watch: stopped');
    // No Redis, no daemon: the ownership ledger is the state directory's.
    expect(stderr).not.toContain('E_REDIS');
  });

  it('a group larger than provisioning.changes.maxGroupMembers is left to a full reconcile, which still carries the change', async () => {
    const s = await startSim();
    cleanups.push(() => s.close());
    const ws = workspace(s, { provisioning: { changes: { maxGroupMembers: 1 } } });
    ws.writeDirectory({ users: people(1, 2), groups: [{ externalId: 'g-1', displayName: 'Team', members: ['u-1', 'u-2'] }] });
    const child = spawn(process.execPath, [BIN, 'watch', '--config', 'config.yaml'], { cwd: ws.dir, env: ws.env });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    cleanups.push(() => void child.kill('SIGKILL'));
    await waitFor(() => stderr.includes('watch: full reconcile finished'), 'the initial full reconcile', 20_000);
    ws.writeDirectory({ users: people(1, 3), groups: [{ externalId: 'g-1', displayName: 'Team', members: ['u-1', 'u-2', 'u-3'] }] });
    await waitFor(() => stderr.includes('group-too-large'), 'the deferral', 15_000);
    await waitFor(() => usersNamed(s, 'user3@example.com') === 1, 'the joiner, by the full reconcile', 15_000);
    child.kill('SIGINT');
    expect(await exited).toBe(0);
  });

  it('a source that cannot report changes is a config error (exit 2)', async () => {
    const s = await startSim();
    cleanups.push(() => s.close());
    const ws = workspace(s, { provisioning: { changes: { enabled: false } } });
    ws.writeDirectory({ users: people(1, 1), groups: [] });
    const child = spawn(process.execPath, [BIN, 'watch', '--config', 'config.yaml'], { cwd: ws.dir, env: ws.env });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const code = await new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
    expect(code).toBe(2);
    expect(stderr).toContain('provisioning.changes.enabled');
    expect(s.store.users()).toHaveLength(0);
  });
});
