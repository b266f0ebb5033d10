/**
 * Targeted reconciles of memberships, and the changes a targeted reconcile must not decide
 * alone (it defers to a full reconcile), one scene per event against the simulator.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { BuiltReconcileContext } from '../../../src/reconcile/from-config.ts';
import type { Simulator } from '../../../src/simulator/index.ts';
import { createWorkspace, startSim, writeRequests, type Workspace } from '../../helpers/reconcile-harness.ts';
import { byName, expectConverged, groups, user, users } from '../lifecycle/support.ts';
import {
  applyTargeted,
  counted,
  edit,
  fullReconcile,
  planOf,
  targeted,
  type ChangePath,
  teamDirectory,
  teamStaff,
  openScene,
  closeScene,
} from './support.ts';

describe('targeted reconcile: memberships and deferrals', () => {
  let sim: Simulator;
  let ws: Workspace;
  let ctx: BuiltReconcileContext;
  let path: ChangePath;

  beforeEach(async () => {
    ({ sim, ws, ctx, path } = await openScene({ directory: teamDirectory(teamStaff(4), ['e-1', 'e-2'], ['e-3', 'e-4']) }));
  });

  afterEach(() => closeScene({ sim, ctx }));

  it('a group move changes exactly two memberships', async () => {
    const { affected } = await edit(ws, ctx, path, teamDirectory(teamStaff(4), ['e-1'], ['e-2', 'e-3', 'e-4']));
    expect(affected.groups.sort()).toEqual(['g-eng', 'g-sales']);
    const out = await targeted(ctx, path, affected);
    const plan = planOf(out.outcome);
    expect(plan.memberships.map((m) => [m.group.displayName, m.add.map((a) => a.externalId), m.remove.map((r) => r.externalId)])).toEqual([
      ['Engineering', [], ['e-2']],
      ['Sales', ['e-2'], []],
    ]);
    expect(plan.summary.changes).toBe(2);
    const applied = await counted(sim, () => applyTargeted(ctx, plan, out.ledger));
    expect(applied.requests.map((r) => `${r.method} ${r.path.replace(/.*\/Groups\/.*/, '/Groups/{id}')}`)).toEqual([
      'PATCH /Groups/{id}',
      'PATCH /Groups/{id}',
    ]);
    expect(groups(sim)).toEqual(['Engineering: ana@example.com', 'Sales: ben@example.com cy@example.com dee@example.com']);
    await expectConverged(ws);
  });

  it("a recycled userName held by a leaver's account defers (name-held) and is never handed over", async () => {
    const leaverAccount = byName(sim, 'ana@example.com');
    const list = [...teamStaff(4).filter((u) => u.externalId !== 'e-1'), user('e-9', 'ana@example.com', { givenName: 'Another' })];
    const { affected } = await edit(ws, ctx, path, teamDirectory(list, ['e-2', 'e-9'], ['e-3', 'e-4']));
    expect(affected.users.sort()).toEqual(['e-1', 'e-9']);
    const writesBefore = writeRequests(sim).length;
    const out = await targeted(ctx, path, affected);
    expect(out.outcome).toMatchObject({ kind: 'defer', reason: 'name-held' });
    expect(writeRequests(sim).length).toBe(writesBefore);
    // The full reconcile it defers to: the conflict is listed, the account stays its owner's.
    const full = await fullReconcile(ctx, path);
    expect(full.plan.conflicts?.map((c) => [c.externalId, c.account.id, c.account.owner])).toEqual([['e-9', leaverAccount.id, 'e-1']]);
    expect(users(sim)).toContain('ana@example.com e-1 inactive');
    expect(sim.store.users().filter((u) => u.externalId === 'e-9')).toEqual([]);
  });

  it('a present-but-invalid change (an invalid e-mail) never deprovisions', async () => {
    const list = teamStaff(4).map((u) => (u.externalId === 'e-3' ? { ...u, emails: 'not-an-e-mail' } : u));
    const { delta, affected } = await edit(ws, ctx, path, teamDirectory(list, ['e-1', 'e-2'], ['e-3', 'e-4']));
    // The entry, and its reference as a member of Sales.
    expect(delta.rejected.map((r) => [r.kind, r.externalId, r.member])).toEqual([
      ['user', 'e-3', undefined],
      ['group', 'g-sales', 'e-3'],
    ]);
    const out = await targeted(ctx, path, affected);
    const plan = planOf(out.outcome);
    expect(plan.summary.changes).toBe(0);
    expect(plan.protected.map((p) => [p.kind, p.externalId])).toEqual([['user', 'e-3']]);
    expect(plan.rejected.map((r) => [r.kind, r.externalId, r.member])).toEqual([
      ['user', 'e-3', undefined],
      ['group', 'g-sales', 'e-3'],
    ]);
    await applyTargeted(ctx, plan, out.ledger);
    expect(users(sim)).toContain('cy@example.com e-3 active');
    expect(groups(sim)).toContain('Sales: cy@example.com dee@example.com');
  });

  it('a group over the member bound defers (group-too-large) and reads nothing more', async () => {
    const { affected } = await edit(ws, ctx, path, teamDirectory(teamStaff(4), ['e-1', 'e-2', 'e-3'], ['e-3', 'e-4']));
    const out = await targeted(ctx, path, affected, { maxGroupMembers: 1 });
    expect(out.outcome).toMatchObject({ kind: 'defer', reason: 'group-too-large' });
    const bounded = await targeted(ctx, path, affected, { maxGroupMembers: 3 });
    expect(planOf(bounded.outcome).memberships.map((m) => [m.group.displayName, m.add.map((a) => a.externalId)])).toEqual([
      ['Engineering', ['e-3']],
    ]);
  });

  it('a joiner whose groups are new: the group is created and the joiner added', async () => {
    const fay = user('e-6', 'fay@example.com');
    const dir = teamDirectory([...teamStaff(4), fay], ['e-1', 'e-2'], ['e-3', 'e-4']);
    dir.groups.push({ externalId: 'g-ops', displayName: 'Ops', members: ['e-6', 'e-1'] });
    const { affected } = await edit(ws, ctx, path, dir);
    const out = await targeted(ctx, path, affected);
    const plan = planOf(out.outcome);
    expect(plan.groups.create.map((g) => g.displayName)).toEqual(['Ops']);
    expect(plan.users.create.map((c) => c.externalId)).toEqual(['e-6']);
    await applyTargeted(ctx, plan, out.ledger);
    expect(groups(sim)).toContain('Ops: ana@example.com fay@example.com');
    await expectConverged(ws);
  });
});

describe('targeted reconcile: an ambiguous match defers', () => {
  it('a joiner whose userName two platform accounts hold (in two cases) defers (ambiguous-match) and writes nothing', async () => {
    const sim = await startSim({ quirks: ['case-sensitive-username'] });
    const ws = createWorkspace(sim, { directory: teamDirectory(teamStaff(4), ['e-1'], ['e-2']) });
    const ctx = await ws.context();
    try {
      const path = (await fullReconcile(ctx)).path;
      sim.store.createUser({ userName: 'fay@example.com', name: { givenName: 'Hand', familyName: 'Made' }, active: true });
      sim.store.createUser({ userName: 'FAY@example.com', name: { givenName: 'Hand', familyName: 'Made' }, active: true });
      const { affected } = await edit(ws, ctx, path, teamDirectory([...teamStaff(4), user('e-6', 'fay@example.com')], ['e-1'], ['e-2']));
      const writes = writeRequests(sim).length;
      const out = await targeted(ctx, path, affected);
      expect(out.outcome).toMatchObject({ kind: 'defer', reason: 'ambiguous-match' });
      expect(writeRequests(sim).length).toBe(writes);
    } finally {
      await ctx.close();
      await sim.close();
    }
  });
});
