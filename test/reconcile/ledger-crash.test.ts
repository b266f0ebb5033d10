/**
 * Ownership across crashes: creates are written to the ledger as pending before the POST,
 * so a run that dies between the platform's create and the ledger save neither orphans the
 * object (the next run owns it and can deprovision it) nor creates it a second time.
 */
import { once } from 'node:events';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { applyReconcile, planReconcile } from '../../src/reconcile/engine.ts';
import { FileLedgerStore } from '../../src/reconcile/file-ledger-store.ts';
import type { LedgerData, LedgerStore } from '../../src/reconcile/ledger.ts';
import type { Simulator } from '../../src/simulator/index.ts';
import {
  SCIM,
  createWorkspace,
  people,
  requestsTo,
  startSim,
  usersNamed,
  type Directory,
  type Workspace,
} from '../helpers/reconcile-harness.ts';

/** The real file store, except that every save after the write-ahead one "crashes". */
class CrashingLedgerStore implements LedgerStore {
  readonly describe = 'crashing';
  saves = 0;
  private readonly inner: FileLedgerStore;
  constructor(inner: FileLedgerStore) {
    this.inner = inner;
  }
  load(): Promise<LedgerData | undefined> {
    return this.inner.load();
  }
  async save(data: LedgerData): Promise<void> {
    this.saves++;
    if (this.saves > 1) throw new Error('simulated crash before the ledger save');
    await this.inner.save(data);
  }
}

function directory(from: number, to: number): Directory {
  return {
    users: people(from, to),
    groups: [{ externalId: 'g-team', displayName: 'Team', members: people(from, to).map((u) => u.externalId) }],
  };
}

/** After recovery: every source user exists once, the ledger owns them, nothing is pending. */
async function expectRecovered(sim: Simulator, ws: Workspace, count: number): Promise<void> {
  for (let n = 1; n <= count; n++) expect(usersNamed(sim, `user${n}@example.com`), `user${n}`).toBe(1);
  expect(sim.store.counts().users).toBe(count);
  const ledger = ws.readLedger();
  expect(ledger?.pending).toEqual([]);
  expect(
    Object.values(ledger?.users ?? {})
      .map((e) => e.externalId)
      .sort(),
  ).toEqual(
    people(1, count)
      .map((u) => u.externalId)
      .sort(),
  );
  // Owned for real: a user who leaves the source is deprovisioned.
  ws.writeDirectory(directory(2, count));
  const leave = await ws.applyInProcess();
  expect(leave.result.failed).toEqual([]);
  expect(leave.plan.users.deactivate.map((u) => u.userName)).toEqual(['user1@example.com']);
  expect(sim.store.getUserByUserName('user1@example.com')?.active).toBe(false);
}

describe('ledger ownership across crashes', () => {
  let sim: Simulator;
  afterEach(() => sim.close());

  it('a crash after the POSTs but before the ledger save: the next run adopts the pending objects', async () => {
    sim = await startSim();
    const ws = createWorkspace(sim, { directory: directory(1, 6) });
    const store = new CrashingLedgerStore(new FileLedgerStore(join(ws.dir, 'state'), 'e2e'));
    const ctx = await ws.context({ ledgerStore: store });
    try {
      const planned = await planReconcile(ctx, { allowDeletes: false });
      await expect(applyReconcile(ctx, planned, {})).rejects.toThrow(/simulated crash/);
    } finally {
      await ctx.close();
    }
    // The platform has the users, the ledger only knows they were pending.
    expect(sim.store.counts().users).toBe(6);
    const crashed = ws.readLedger();
    expect(crashed?.users).toEqual({});
    expect(crashed?.pending).toEqual(expect.arrayContaining(people(1, 6).map((u) => `user:${u.externalId}`)));

    sim.clearRequests();
    const next = await ws.apply();
    expect(next.code, next.stderr).toBe(0);
    expect(next.out.plan.users.create).toEqual([]);
    expect(requestsTo(sim, 'POST', `${SCIM}/Users`)).toEqual([]);
    // Taken over as ours (recorded), not merely left alone.
    expect(
      next.out.plan.users.update
        .filter((u) => u.adopt)
        .map((u) => u.externalId)
        .sort(),
    ).toEqual(
      people(1, 6)
        .map((u) => u.externalId)
        .sort(),
    );
    expect(next.out.result.succeeded['user.adopt']).toBe(6);
    expect(next.out.plan.groups.create.map((g) => g.displayName)).toEqual(['Team']);
    await expectRecovered(sim, ws, 6);
  });

  it('apply killed with SIGKILL mid-run on a slow platform: the re-run creates no duplicates', async () => {
    sim = await startSim({ faults: [{ kind: 'latency', method: 'POST', pathPrefix: `${SCIM}/Users`, latencyMs: 150 }] });
    const ws = createWorkspace(sim, { directory: directory(1, 10) });
    const child = ws.spawnApply(['--concurrency', '2']);
    const exited = once(child, 'exit');
    const deadline = Date.now() + 20_000;
    while (requestsTo(sim, 'POST', `${SCIM}/Users`).filter((r) => r.status === 201).length < 3 && Date.now() < deadline) await sleep(10);
    child.kill('SIGKILL');
    const [, signal] = (await exited) as [number | null, NodeJS.Signals | null];
    expect(signal).toBe('SIGKILL');
    await sleep(300); // let POSTs already in the server's hands finish creating
    const createdBeforeKill = sim.store.counts().users;
    expect(createdBeforeKill).toBeGreaterThanOrEqual(3);
    expect(createdBeforeKill).toBeLessThan(10);
    expect(ws.readLedger()?.pending.length).toBeGreaterThan(0);

    sim.setFaults([]);
    sim.clearRequests();
    const next = await ws.apply();
    expect(next.code, next.stderr).toBe(0);
    expect(requestsTo(sim, 'POST', `${SCIM}/Users`)).toHaveLength(10 - createdBeforeKill);
    await expectRecovered(sim, ws, 10);
  });
});
