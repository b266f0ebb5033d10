/**
 * Targeted reconciles of users, one scene per event, against the simulator over a socket:
 * the change flows as a source delta into the desired cache, only the affected platform
 * objects are read, and the plan is the full planner's. Each scene proves the platform state
 * after the targeted apply, the request budget, and that a full plan afterwards changes nothing.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { BuiltReconcileContext } from '../../../src/reconcile/from-config.ts';
import type { Simulator } from '../../../src/simulator/index.ts';
import type { ConfigPatch, Workspace } from '../../helpers/reconcile-harness.ts';
import { byName, expectConverged, groups, user, users } from '../lifecycle/support.ts';
import { applyDelta, mergeAffected } from '../../../src/reconcile/targeted/desired-cache.ts';
import {
  closeScene,
  openScene,
  applyTargeted,
  counted,
  edit,
  fullListings,
  fullReconcile,
  planOf,
  targeted,
  type ChangePath,
  teamDirectory,
  teamStaff,
} from './support.ts';

/** At most this many platform requests for one changed user, group membership requests apart. */
const BUDGET = 5;

describe('targeted reconcile of users', () => {
  let sim: Simulator;
  let ws: Workspace;
  let ctx: BuiltReconcileContext;
  let path: ChangePath;

  async function setUp(config: ConfigPatch = {}): Promise<void> {
    ({ sim, ws, ctx, path } = await openScene({ directory: teamDirectory(teamStaff(5), ['e-1', 'e-2'], ['e-3', 'e-4', 'e-5']), config }));
  }

  afterEach(() => closeScene({ sim, ctx }));

  describe('deprovision.action deactivate', () => {
    beforeEach(() => setUp());

    it('a joiner is created with the groups of the source, within the request budget', async () => {
      const fay = user('e-6', 'fay@example.com');
      const { affected } = await edit(ws, ctx, path, teamDirectory([...teamStaff(5), fay], ['e-1', 'e-2', 'e-6'], ['e-3', 'e-4', 'e-5']));
      expect(affected.users).toEqual(['e-6']);
      const { value: out, requests } = await counted(sim, () => targeted(ctx, path, affected));
      const plan = planOf(out.outcome);
      expect(plan.users.create.map((c) => c.externalId)).toEqual(['e-6']);
      expect(plan.memberships.map((m) => [m.group.displayName, m.add.map((a) => a.externalId), m.remove.length])).toEqual([
        ['Engineering', ['e-6'], 0],
      ]);
      expect(requests.every((r) => r.method === 'GET')).toBe(true);
      expect(fullListings(requests)).toEqual([]);
      // Its account by externalId (none yet) and the holders of its userName; Engineering by id.
      expect(out.outcome.kind === 'plan' && out.outcome.readsBy).toEqual({ users: 2, memberships: 1 });
      const applied = await counted(sim, () => applyTargeted(ctx, plan, out.ledger));
      const userRequests = requests.length - (out.outcome.kind === 'plan' ? out.outcome.readsBy.memberships : 0);
      expect(userRequests + applied.requests.filter((r) => r.path.includes('/Users')).length).toBeLessThanOrEqual(BUDGET);
      expect(byName(sim, 'fay@example.com')).toMatchObject({ externalId: 'e-6', active: true });
      expect(groups(sim)).toContain('Engineering: ana@example.com ben@example.com fay@example.com');
      await expectConverged(ws);
    });

    it('a leaver disabled in the source is deactivated and keeps its groups, without listing the platform', async () => {
      const list = teamStaff(5).map((u) => (u.externalId === 'e-2' ? { ...u, active: false } : u));
      const { affected } = await edit(ws, ctx, path, teamDirectory(list, ['e-1', 'e-2'], ['e-3', 'e-4', 'e-5']));
      const { value: out, requests } = await counted(sim, () => targeted(ctx, path, affected));
      const plan = planOf(out.outcome);
      expect(plan.users.deactivate).toEqual([expect.objectContaining({ externalId: 'e-2', reason: 'disabled-in-source' })]);
      // One read: its account by id, which already carries its userName.
      expect(out.outcome.kind === 'plan' && out.outcome.readsBy).toEqual({ users: 1, memberships: 0 });
      expect(plan.summary.changes).toBe(1);
      // Reads by id or by filter only: never a page of every user.
      expect(fullListings(requests)).toEqual([]);
      const applied = await counted(sim, () => applyTargeted(ctx, plan, out.ledger));
      expect(requests.length + applied.requests.length).toBeLessThanOrEqual(BUDGET);
      expect(users(sim)).toContain('ben@example.com e-2 inactive');
      await expectConverged(ws);
    });

    it('a leaver deleted from the source is deactivated and removed from its groups', async () => {
      const list = teamStaff(5).filter((u) => u.externalId !== 'e-4');
      const { affected } = await edit(ws, ctx, path, teamDirectory(list, ['e-1', 'e-2'], ['e-3', 'e-5']));
      expect(affected.users).toEqual(['e-4']);
      const out = await targeted(ctx, path, affected);
      const plan = planOf(out.outcome);
      // The leaver's account by id; Sales by id. No name to look up: the leaver has none in the source.
      expect(out.outcome.kind === 'plan' && out.outcome.readsBy).toEqual({ users: 1, memberships: 1 });
      expect(plan.users.deactivate).toEqual([expect.objectContaining({ externalId: 'e-4', reason: 'not-in-source' })]);
      // The guard's percentage is of the tenant's 7 managed objects (1 of 7 is within maxDeletePercent 20), not of the 2 read.
      expect(plan.guard).toMatchObject({ tripped: false, managed: 7, destructive: 1 });
      expect(plan.memberships.map((m) => [m.group.displayName, m.add.length, m.remove.map((r) => r.externalId)])).toEqual([
        ['Sales', 0, ['e-4']],
      ]);
      await applyTargeted(ctx, plan, out.ledger);
      expect(users(sim)).toContain('dee@example.com e-4 inactive');
      expect(groups(sim)).toContain('Sales: cy@example.com eve@example.com');
      await expectConverged(ws);
    });

    it("a leaver's notification delivered twice: the second targeted run plans nothing", async () => {
      const list = teamStaff(5).filter((u) => u.externalId !== 'e-4');
      const { delta, affected } = await edit(ws, ctx, path, teamDirectory(list, ['e-1', 'e-2'], ['e-3', 'e-5']));
      const first = await targeted(ctx, path, affected);
      await applyTargeted(ctx, planOf(first.outcome), first.ledger);
      const again = await targeted(ctx, path, applyDelta(path.cache, delta));
      expect(planOf(again.outcome).summary.changes).toBe(0);
      expect(users(sim)).toContain('dee@example.com e-4 inactive');
    });

    it('a stale notification delivered after a newer one is repaired by the next full reconcile', async () => {
      const renamed = teamStaff(5).map((u) => (u.externalId === 'e-5' ? user('e-5', 'eva@example.com') : u));
      const older = await edit(ws, ctx, path, teamDirectory(renamed, ['e-1', 'e-2'], ['e-3', 'e-4', 'e-5']));
      const newer = await edit(ws, ctx, path, teamDirectory(teamStaff(5), ['e-1', 'e-2'], ['e-3', 'e-4', 'e-5']));
      // The newer change (back to eve@) arrives, then the older one (eva@) again: the cache is stale.
      applyDelta(path.cache, older.delta);
      const stale = await targeted(ctx, path, mergeAffected(newer.affected, older.affected));
      await applyTargeted(ctx, planOf(stale.outcome), stale.ledger);
      expect(users(sim)).toContain('eva@example.com e-5 active');
      await fullReconcile(ctx, path);
      expect(users(sim)).toContain('eve@example.com e-5 active');
      await expectConverged(ws);
    });

    it('a rename changes the userName of the same account', async () => {
      const before = byName(sim, 'cy@example.com').id;
      const list = teamStaff(5).map((u) => (u.externalId === 'e-3' ? user('e-3', 'cyrus@example.com') : u));
      const { affected } = await edit(ws, ctx, path, teamDirectory(list, ['e-1', 'e-2'], ['e-3', 'e-4', 'e-5']));
      const { value: out, requests } = await counted(sim, () => targeted(ctx, path, affected));
      const plan = planOf(out.outcome);
      expect(plan.users.update.map((u) => [u.id, u.changes.find((c) => c.path === 'userName')?.after])).toEqual([
        [before, 'cyrus@example.com'],
      ]);
      // Its account by id, and who holds the new name.
      expect(out.outcome.kind === 'plan' && out.outcome.readsBy).toEqual({ users: 2, memberships: 0 });
      const applied = await counted(sim, () => applyTargeted(ctx, plan, out.ledger));
      expect(requests.length + applied.requests.length).toBeLessThanOrEqual(BUDGET);
      expect(byName(sim, 'cyrus@example.com').id).toBe(before);
      await expectConverged(ws);
    });

    it('an attribute change updates only that user', async () => {
      const list = teamStaff(5).map((u) => (u.externalId === 'e-5' ? { ...u, familyName: 'Evergreen' } : u));
      const { affected } = await edit(ws, ctx, path, teamDirectory(list, ['e-1', 'e-2'], ['e-3', 'e-4', 'e-5']));
      const out = await targeted(ctx, path, affected);
      const plan = planOf(out.outcome);
      expect(plan.summary.changes).toBe(1);
      expect(plan.users.update.map((u) => u.externalId)).toEqual(['e-5']);
      expect(plan.users.update[0]?.changes).toContainEqual({ path: 'name.familyName', before: 'e-5', after: 'Evergreen' });
      await applyTargeted(ctx, plan, out.ledger);
      expect(byName(sim, 'eve@example.com').name?.familyName).toBe('Evergreen');
      await expectConverged(ws);
    });
  });

  describe('deprovision.action delete', () => {
    beforeEach(() => setUp({ provisioning: { deprovision: { action: 'delete' } } }));

    it('a leaver deleted from the source is deleted from the platform', async () => {
      const list = teamStaff(5).filter((u) => u.externalId !== 'e-1');
      const { affected } = await edit(ws, ctx, path, teamDirectory(list, ['e-2'], ['e-3', 'e-4', 'e-5']));
      const out = await targeted(ctx, path, affected);
      const plan = planOf(out.outcome);
      expect(plan.users.delete).toEqual([expect.objectContaining({ externalId: 'e-1', reason: 'not-in-source' })]);
      await applyTargeted(ctx, plan, out.ledger);
      expect(sim.store.getUserByUserName('ana@example.com')).toBeUndefined();
      expect(groups(sim)).toContain('Engineering: ben@example.com');
      await expectConverged(ws);
    });
  });
});
