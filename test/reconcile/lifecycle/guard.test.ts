/**
 * The guard counts what it protects: managed objects are counted from the platform listing
 * under the ownership mode (a lost ledger does not make them uncounted), member removals have
 * their own limits, a membership read that comes back empty trips it, and an approval covers
 * the plan that was held — a larger one trips again.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { applyReconcile, planReconcile } from '../../../src/reconcile/engine.ts';
import type { Simulator } from '../../../src/simulator/index.ts';
import { createWorkspace, people, startSim, writeRequests, type DirUser, type Directory } from '../../helpers/reconcile-harness.ts';
import { apply, expectConverged, groups } from './support.ts';

function dir(list: DirUser[], members: DirUser[] = list): Directory {
  return { users: list, groups: [{ externalId: 'g-all', displayName: 'Everyone', members: members.map((u) => u.externalId) }] };
}

const active = (sim: Simulator): number => sim.store.users().filter((u) => u.active !== false).length;

describe('the guard counts what it protects', () => {
  let sim: Simulator;
  afterEach(() => sim.close());

  it('lost ledger with ownership.mode externalId: 38 of 40 leaving trips the guard (managed counted from the listing)', async () => {
    sim = await startSim();
    const ws = createWorkspace(sim, { directory: dir(people(1, 40)), config: { provisioning: { ownership: { mode: 'externalId' } } } });
    await apply(ws);
    rmSync(join(ws.dir, 'state'), { recursive: true, force: true });
    expect(ws.readLedger()).toBeUndefined();

    ws.writeDirectory(dir(people(1, 2)));
    sim.clearRequests();
    const run = await ws.apply();
    expect(run.code, run.stderr).toBe(3);
    expect(run.out.plan.guard).toMatchObject({ tripped: true, destructive: 38, managed: 41 });
    expect(run.out.plan.guard.reasons).toContain('38 of 41 managed objects (92.7%) exceed guards.maxDeletePercent (20%)');
    expect(writeRequests(sim).filter((r) => r.method !== 'POST')).toEqual([]);
    expect(active(sim)).toBe(40);
  });

  it('membership read that comes back empty: no member is removed, the guard says why', async () => {
    sim = await startSim();
    const list = people(1, 10);
    // Limits this loose would allow the removals: only the empty-membership rule can trip.
    const ws = createWorkspace(sim, {
      directory: dir(list),
      config: { provisioning: { guards: { maxMemberRemovals: 1000, maxMemberRemovalPercent: 100 } } },
    });
    await apply(ws);
    ws.writeDirectory(dir(list, []));
    sim.clearRequests();
    const run = await ws.applyInProcess();
    expect(run.plan.guard.tripped).toBe(true);
    expect(run.plan.guard.reasons).toEqual(['the source lists no member in any group while 10 members would be removed']);
    expect(run.result.held.membersRemove).toBe(10);
    expect(writeRequests(sim)).toEqual([]);
    expect(groups(sim)).toEqual([
      `Everyone: ${list
        .map((u) => u.userName)
        .sort()
        .join(' ')}`,
    ]);
  });

  it('member removals have their own limit', async () => {
    sim = await startSim();
    const list = people(1, 10);
    const ws = createWorkspace(sim, { directory: dir(list), config: { provisioning: { guards: { maxMemberRemovals: 3 } } } });
    await apply(ws);
    ws.writeDirectory(dir(list, list.slice(0, 6)));
    const held = await ws.applyInProcess();
    expect(held.plan.guard).toMatchObject({ tripped: true, memberRemovals: 4, members: 10, maxMemberRemovals: 3 });
    expect(held.plan.guard.reasons).toEqual(['4 member removals exceed guards.maxMemberRemovals (3)']);
    expect(groups(sim)[0]?.split(' ')).toHaveLength(11);
    const released = await apply(ws, { allowDeletes: true });
    expect(released.result.membersRemoved).toBe(4);
    expect(groups(sim)).toEqual([
      `Everyone: ${list
        .slice(0, 6)
        .map((u) => u.userName)
        .sort()
        .join(' ')}`,
    ]);
    await expectConverged(ws);
  });

  it('approval bound to the held plan: it releases that plan (or a smaller one), a larger plan trips again', async () => {
    sim = await startSim();
    const ws = createWorkspace(sim, {
      directory: dir(people(1, 20)),
      config: { provisioning: { guards: { maxDeletes: 5, maxDeletePercent: 100 } } },
    });
    await apply(ws);
    ws.writeDirectory(dir(people(1, 12)));
    const held = await ws.planInProcess();
    expect(held.guard).toMatchObject({ tripped: true, destructive: 8, memberRemovals: 8 });
    const approval = { destructive: held.guard.destructive, memberRemovals: held.guard.memberRemovals };

    // Before the approved run, four more people vanish from the source: 12 > 8 approved.
    ws.writeDirectory(dir(people(1, 8)));
    const ctx = await ws.context();
    try {
      const bigger = await planReconcile(ctx, { allowDeletes: false, approval });
      expect(bigger.plan.guard.tripped).toBe(true);
      expect(bigger.plan.guard.reasons.at(-1)).toBe(
        'the approval covers 8 deactivations/deletions and 8 member removals; this plan has 12 and 12: approve again after checking it',
      );
      const r = await applyReconcile(ctx, bigger, {});
      expect(r.held).toMatchObject({ usersDeactivate: 12, membersRemove: 12 });
      expect(active(sim)).toBe(20);

      // Back to what was approved (a smaller plan would do too): released.
      ws.writeDirectory(dir(people(1, 13)));
      const same = await planReconcile(ctx, { allowDeletes: false, approval });
      expect(same.plan.guard).toMatchObject({ tripped: false, overridden: true, destructive: 7, approval });
      await applyReconcile(ctx, same, {});
    } finally {
      await ctx.close();
    }
    expect(active(sim)).toBe(13);
    await expectConverged(ws);
  });
});
