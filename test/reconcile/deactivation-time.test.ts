/**
 * Leaver, then a crash: the time of a deactivation is saved before the PATCH active:false
 * (write-ahead, like pending creates), so a one-shot apply that dies after the platform
 * applied the PATCH and before the ledger's end-of-phase save still knows when the grace
 * period of deleteAfterDays started.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { applyReconcile, planReconcile } from '../../src/reconcile/engine.ts';
import { FileLedgerStore } from '../../src/reconcile/file-ledger-store.ts';
import type { LedgerData, LedgerStore } from '../../src/reconcile/ledger.ts';
import type { Simulator } from '../../src/simulator/index.ts';
import { SCIM, createWorkspace, people, requestsTo, startSim } from '../helpers/reconcile-harness.ts';

/** The real file store; a save that comes after a PATCH reached the platform "crashes". */
class CrashAfterPatchStore implements LedgerStore {
  readonly describe = 'crash-after-patch';
  private readonly inner: FileLedgerStore;
  private readonly sim: Simulator;
  constructor(inner: FileLedgerStore, sim: Simulator) {
    this.inner = inner;
    this.sim = sim;
  }
  load(): Promise<LedgerData | undefined> {
    return this.inner.load();
  }
  async save(data: LedgerData): Promise<void> {
    if (requestsTo(this.sim, 'PATCH', `${SCIM}/Users`).length > 0) throw new Error('simulated crash after the PATCH');
    await this.inner.save(data);
  }
}

describe('deactivation time across a crash (one-shot apply)', () => {
  let sim: Simulator;
  afterEach(() => sim.close());

  it('leaver, crash after the PATCH active:false and before the ledger save: the deactivation time is already saved', async () => {
    sim = await startSim();
    const ws = createWorkspace(sim, {
      directory: { users: people(1, 10), groups: [] },
      config: { provisioning: { deprovision: { action: 'deactivate', deleteAfterDays: 30 } } },
    });
    await ws.applyInProcess();
    const leaver = sim.store.getUserByUserName('user10@example.com')!;
    ws.writeDirectory({ users: people(1, 9), groups: [] });
    sim.clearRequests();

    const before = Date.now();
    const ctx = await ws.context({ ledgerStore: new CrashAfterPatchStore(new FileLedgerStore(join(ws.dir, 'state'), 'e2e'), sim) });
    try {
      const planned = await planReconcile(ctx, { allowDeletes: false });
      expect(planned.plan.users.deactivate.map((u) => u.id)).toEqual([leaver.id]);
      await expect(applyReconcile(ctx, planned, {})).rejects.toThrow(/simulated crash/);
    } finally {
      await ctx.close();
    }
    expect(sim.store.getUser(leaver.id)?.active).toBe(false);
    const entry = ws.readLedger()?.users[leaver.id];
    expect(entry?.externalId).toBe('u-10');
    expect(entry?.deactivatedAt).toBeGreaterThanOrEqual(before);
    expect(entry?.deactivatedAt).toBeLessThanOrEqual(Date.now());
  });
});
