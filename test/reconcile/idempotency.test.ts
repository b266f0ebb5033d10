/**
 * Idempotency through the real CLI: applying the example directory, then planning and
 * applying again, must find nothing to do and send no write request at all.
 */
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/simulator/index.ts';
import { EXAMPLES, createWorkspace, exampleDirectory, startSim, writeRequests, type Workspace } from '../helpers/reconcile-harness.ts';

describe('idempotency (config/examples through the CLI)', () => {
  let sim: Simulator;
  let ws: Workspace;

  beforeAll(async () => {
    sim = await startSim();
    ws = createWorkspace(sim, { directory: exampleDirectory() });
    // The demo config as shipped, with its own state dir inside the temp workspace.
    const demo = parse(readFileSync(join(EXAMPLES, 'config.demo.yaml'), 'utf8')) as Record<string, unknown>;
    ws.writeConfigText(stringify({ ...demo, state: { dir: 'state' }, logging: { level: 'warn' } }));
    copyFileSync(join(EXAMPLES, 'directory.yaml'), ws.directoryPath);
  });
  afterAll(() => sim.close());

  it('converges in one apply; then plan is empty and a second apply writes nothing', async () => {
    const dir = exampleDirectory();
    const activeUsers = dir.users.filter((u) => u.active !== false);

    const first = await ws.apply();
    expect(first.code, first.stderr).toBe(0);
    expect(first.out.result.failed).toEqual([]);
    expect(first.out.plan.summary.usersCreate).toBe(activeUsers.length);
    expect(sim.store.counts()).toEqual({ users: activeUsers.length, groups: dir.groups.length });
    // The ledger names every created object as ours, with nothing left pending.
    const ledger = ws.readLedger('demo');
    expect(Object.keys(ledger?.users ?? {})).toHaveLength(activeUsers.length);
    expect(Object.keys(ledger?.groups ?? {})).toHaveLength(dir.groups.length);
    expect(ledger?.pending).toEqual([]);

    const plan = await ws.plan();
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.out.summary.changes).toBe(0);
    expect(plan.out.memberships).toEqual([]);

    sim.clearRequests();
    const second = await ws.apply();
    expect(second.code, second.stderr).toBe(0);
    expect(second.out.plan.summary.changes).toBe(0);
    expect(sim.requests.length).toBeGreaterThan(0); // it did read the platform
    expect(writeRequests(sim)).toEqual([]);
  });

  it('stays a no-op after the directory file is rewritten with the same content in another order', async () => {
    const dir = exampleDirectory();
    writeFileSync(ws.directoryPath, stringify({ groups: [...dir.groups].reverse(), users: [...dir.users].reverse() }));
    sim.clearRequests();
    const again = await ws.applyInProcess();
    expect(again.plan.summary.changes).toBe(0);
    expect(writeRequests(sim)).toEqual([]);
  });
});
