/**
 * Drift made directly in the platform, behind the tool's back: the plan names each change
 * (attribute before/after, member add/remove, reactivation, group rename), apply corrects
 * them, and the next plan is clean.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/simulator/index.ts';
import type { ScimGroup, ScimUser } from '../../src/platform/scim/types.ts';
import { createWorkspace, exampleDirectory, memberNames, startSim, type Workspace } from '../helpers/reconcile-harness.ts';

function user(sim: Simulator, userName: string): ScimUser {
  const u = sim.store.getUserByUserName(userName);
  if (!u) throw new Error(`no platform user ${userName}`);
  return u;
}

function group(sim: Simulator, displayName: string): ScimGroup {
  const g = sim.store.getGroupByDisplayName(displayName);
  if (!g) throw new Error(`no platform group ${displayName}`);
  return g;
}

describe('drift on the platform is detected and corrected', () => {
  let sim: Simulator;
  let ws: Workspace;
  let engineeringBefore: string[];

  beforeAll(async () => {
    sim = await startSim();
    ws = createWorkspace(sim, { directory: exampleDirectory() });
    const first = await ws.applyInProcess();
    expect(first.result.failed).toEqual([]);
    engineeringBefore = memberNames(sim, 'Engineering');
  });
  afterAll(() => sim.close());

  it('plans every drifted attribute, membership, activation and group name', async () => {
    const alice = user(sim, 'alice.anderson@example.com');
    const bob = user(sim, 'bob.baker@example.com');
    const carmen = user(sim, 'carmen.castillo@example.com');
    const dmitri = user(sim, 'dmitri.volkov@example.com');
    const intruder = user(sim, 'valentina.costa@example.com'); // Finance, not Engineering
    const engineering = group(sim, 'Engineering');
    const finance = group(sim, 'Finance');

    sim.store.updateUser(alice.id, { name: { givenName: 'Alice', familyName: 'Andersen' } });
    sim.store.updateUser(bob.id, { displayName: 'Robert Baker' });
    sim.store.updateUser(dmitri.id, { active: false });
    sim.store.updateGroup(engineering.id, {
      members: [...(engineering.members ?? []).filter((m) => m.value !== carmen.id), { value: intruder.id }],
    });
    sim.store.updateGroup(finance.id, { displayName: 'Finance (legacy)' });

    const { code, out: plan, stderr } = await ws.plan();
    expect(code, stderr).toBe(0);

    const updates = Object.fromEntries(plan.users.update.map((u) => [u.userName, u]));
    expect(Object.keys(updates).sort()).toEqual(['alice.anderson@example.com', 'bob.baker@example.com']);
    expect(updates['alice.anderson@example.com']?.changes).toEqual([{ path: 'name.familyName', before: 'Andersen', after: 'Anderson' }]);
    expect(updates['alice.anderson@example.com']?.adopt).toBe(false);
    expect(updates['bob.baker@example.com']?.changes).toEqual([{ path: 'displayName', before: 'Robert Baker', after: 'Bob Baker' }]);

    expect(plan.users.reactivate).toHaveLength(1);
    expect(plan.users.reactivate[0]).toMatchObject({ id: dmitri.id, userName: 'dmitri.volkov@example.com' });
    expect(plan.users.reactivate[0]?.changes).toContainEqual({ path: 'active', before: false, after: true });

    expect(plan.groups.update).toHaveLength(1);
    expect(plan.groups.update[0]).toMatchObject({ id: finance.id, externalId: 'g-finance' });
    expect(plan.groups.update[0]?.changes).toEqual([{ path: 'displayName', before: 'Finance (legacy)', after: 'Finance' }]);

    expect(plan.memberships).toHaveLength(1);
    const m = plan.memberships[0];
    expect(m?.group).toEqual({ id: engineering.id, externalId: 'g-engineering', displayName: 'Engineering' });
    expect(m?.add).toEqual([{ id: carmen.id, externalId: 'u-1003', userName: 'carmen.castillo@example.com' }]);
    expect(m?.remove).toEqual([{ id: intruder.id, externalId: 'u-1048', userName: 'valentina.costa@example.com' }]);

    // Nothing else: no creates, no deprovisioning, and the guard is quiet.
    expect(plan.users.create).toEqual([]);
    expect(plan.users.deactivate).toEqual([]);
    expect(plan.groups.create).toEqual([]);
    expect(plan.guard.tripped).toBe(false);
    expect(plan.summary.changes).toBe(2 + 1 + 1 + 1 + 1);
  });

  it('apply corrects the drift and the next plan is clean', async () => {
    const applied = await ws.applyInProcess();
    expect(applied.result.failed).toEqual([]);
    expect(applied.result.succeeded).toMatchObject({ 'user.update': 2, 'user.reactivate': 1, 'group.update': 1, 'group.members': 1 });

    expect(user(sim, 'alice.anderson@example.com').name?.familyName).toBe('Anderson');
    expect(user(sim, 'bob.baker@example.com').displayName).toBe('Bob Baker');
    expect(user(sim, 'dmitri.volkov@example.com').active).toBe(true);
    expect(sim.store.getGroupByDisplayName('Finance (legacy)')).toBeUndefined();
    expect(group(sim, 'Finance').externalId).toBe('g-finance');
    expect(memberNames(sim, 'Engineering')).toEqual(engineeringBefore);

    expect((await ws.planInProcess()).summary.changes).toBe(0);
  });
});
