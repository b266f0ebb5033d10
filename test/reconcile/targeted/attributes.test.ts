/**
 * User attributes in a targeted reconcile: the attribute step of a full plan, run over the
 * neighbourhood of the change, against the simulator's attribute API over a socket.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { BuiltReconcileContext } from '../../../src/reconcile/from-config.ts';
import type { Simulator } from '../../../src/simulator/index.ts';
import { createWorkspace, startSim, type Directory, type Workspace } from '../../helpers/reconcile-harness.ts';
import { expectConverged } from '../lifecycle/support.ts';
import { attributeConfig, staff, valuesOf } from '../attributes/support.ts';
import { applyTargeted, edit, fullReconcile, planOf, targeted, type ChangePath, openScene, closeScene } from './support.ts';

function directory(regionOfTwo: string): Directory {
  return {
    users: [staff(1, { l: 'eu', department: 'Finance' }), staff(2, { l: regionOfTwo, department: 'Sales' }), staff(3, { l: 'eu' })],
    groups: [{ externalId: 'g-1', displayName: 'Analysts', members: ['u-1', 'u-2'] }],
  };
}

describe('targeted reconcile: the attribute guard takes its percentage against the whole tenant', () => {
  it("one of ten users' access-relevant value replaced is within maxAttributeClearPercent 20: planned, not deferred", async () => {
    const sim = await startSim();
    const many = (changed: string): Directory => ({
      users: Array.from({ length: 10 }, (_, i) => staff(i + 1, { l: i === 4 ? changed : 'eu' })),
      groups: [],
    });
    const ws = createWorkspace(sim, { directory: many('us'), config: attributeConfig({}, { maxAttributeClearPercent: 20 }) });
    const ctx = await ws.context();
    try {
      const path = (await fullReconcile(ctx)).path;
      const { affected } = await edit(ws, ctx, path, many('apac'));
      const out = await targeted(ctx, path, affected);
      const plan = planOf(out.outcome);
      expect(plan.guard.attributes).toMatchObject({ attributeClearUsers: 1, attributeUsers: 10 });
      await applyTargeted(ctx, plan, out.ledger);
      expect(valuesOf(sim, 'user5@example.com')).toMatchObject({ region: 'APAC' });
    } finally {
      await ctx.close();
      await sim.close();
    }
  });
});

describe('targeted reconcile: user attributes', () => {
  let sim: Simulator;
  let ws: Workspace;
  let ctx: BuiltReconcileContext;
  let path: ChangePath;

  beforeEach(async () => {
    ({ sim, ws, ctx, path } = await openScene({ directory: directory('us'), config: attributeConfig() }));
  });

  afterEach(() => closeScene({ sim, ctx }));

  it("a mover's region change is written to that user only", async () => {
    expect(valuesOf(sim, 'user2@example.com')).toMatchObject({ region: 'US' });
    const { affected } = await edit(ws, ctx, path, directory('apac'));
    expect(affected.users).toEqual(['u-2']);
    const out = await targeted(ctx, path, affected);
    const plan = planOf(out.outcome);
    expect(
      plan.attributes?.users.map((u) => [u.externalId, u.changes.map((c) => `${c.attribute}:${String(c.before)}→${String(c.after)}`)]),
    ).toEqual([['u-2', ['region:US→APAC']]]);
    await applyTargeted(ctx, plan, out.ledger);
    expect(valuesOf(sim, 'user2@example.com')).toMatchObject({ region: 'APAC', department: 'Sales' });
    expect(valuesOf(sim, 'user1@example.com')).toMatchObject({ region: 'EU' });
    await expectConverged(ws);
  });
});
