/**
 * Renames converge in one run: swaps and cycles go through a temporary name (apply phase
 * `renames`), a user or group takes the name of one that left the source and is deleted (apply
 * phase `name-deletes`), a case-only rename is applied, and no rename ever loops on 409.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Simulator } from '../../../src/simulator/index.ts';
import { renderPlan } from '../../../src/reconcile/render.ts';
import { createWorkspace, startSim, writeRequests, type DirUser, type Directory } from '../../helpers/reconcile-harness.ts';
import { apply, byName, expectConverged, groups, user, users } from './support.ts';

function dir(list: DirUser[], groupNames: [string, string] = ['Alpha', 'Beta']): Directory {
  return {
    users: list,
    groups: [
      { externalId: 'g-1', displayName: groupNames[0], members: ['u-1'] },
      { externalId: 'g-2', displayName: groupNames[1], members: ['u-2'] },
    ],
  };
}

const conflicts = (sim: Simulator) => writeRequests(sim).filter((r) => r.status === 409);

describe('renames converge', () => {
  let sim: Simulator;
  afterEach(() => sim.close());

  it('userName swap: two accounts exchange their names in one run, each keeping its id and its person', async () => {
    sim = await startSim();
    const ws = createWorkspace(sim, {
      directory: dir([user('u-1', 'a@example.com'), user('u-2', 'b@example.com'), user('u-3', 'c@example.com')]),
    });
    await apply(ws);
    const [a, b] = [byName(sim, 'a@example.com').id, byName(sim, 'b@example.com').id];

    ws.writeDirectory(
      dir([
        user('u-1', 'b@example.com', { givenName: 'a' }),
        user('u-2', 'a@example.com', { givenName: 'b' }),
        user('u-3', 'c@example.com'),
      ]),
    );
    sim.clearRequests();
    const run = await apply(ws);
    expect(run.plan.users.update.map((u) => u.renameVia !== undefined)).toEqual([true, true]);
    expect(conflicts(sim)).toEqual([]);
    expect(sim.store.getUser(a)).toMatchObject({ externalId: 'u-1', userName: 'b@example.com' });
    expect(sim.store.getUser(b)).toMatchObject({ externalId: 'u-2', userName: 'a@example.com' });
    expect(users(sim)).toEqual(['a@example.com u-2 active', 'b@example.com u-1 active', 'c@example.com u-3 active']);
    await expectConverged(ws);
  });

  it('rename cycle of three: a→b, b→c, c→a lands in one run', async () => {
    sim = await startSim();
    const ws = createWorkspace(sim, {
      directory: dir([user('u-1', 'a@example.com'), user('u-2', 'b@example.com'), user('u-3', 'c@example.com')]),
    });
    await apply(ws);
    const ids = ['a', 'b', 'c'].map((x) => byName(sim, `${x}@example.com`).id);

    ws.writeDirectory(
      dir([
        user('u-1', 'b@example.com', { givenName: 'a' }),
        user('u-2', 'c@example.com', { givenName: 'b' }),
        user('u-3', 'a@example.com', { givenName: 'c' }),
      ]),
    );
    sim.clearRequests();
    await apply(ws);
    expect(conflicts(sim)).toEqual([]);
    expect(ids.map((id) => sim.store.getUser(id)?.userName)).toEqual(['b@example.com', 'c@example.com', 'a@example.com']);
    expect(users(sim)).toEqual(['a@example.com u-3 active', 'b@example.com u-1 active', 'c@example.com u-2 active']);
    await expectConverged(ws);
  });

  it('case-only rename: Bob@Example.com becomes bob@example.com on the same account', async () => {
    sim = await startSim();
    const ws = createWorkspace(sim, {
      directory: dir([user('u-1', 'a@example.com'), user('u-2', 'Bob@Example.com', { givenName: 'bob' })]),
    });
    await apply(ws);
    const id = byName(sim, 'bob@example.com').id;
    ws.writeDirectory(dir([user('u-1', 'a@example.com'), user('u-2', 'bob@example.com', { givenName: 'bob' })]));
    const run = await apply(ws);
    expect(run.plan.users.update.map((u) => [u.id, u.changes])).toEqual([
      [id, [{ path: 'userName', before: 'Bob@Example.com', after: 'bob@example.com' }]],
    ]);
    expect(run.plan.users.update[0]?.renameVia).toBeUndefined();
    expect(sim.store.getUser(id)?.userName).toBe('bob@example.com');
    await expectConverged(ws);
  });

  it('group displayName swap and case-only group rename land in one run', async () => {
    sim = await startSim();
    const list = [user('u-1', 'a@example.com'), user('u-2', 'b@example.com')];
    const ws = createWorkspace(sim, { directory: dir(list, ['Alpha', 'Beta']) });
    await apply(ws);
    const [g1, g2] = [sim.store.getGroupByDisplayName('Alpha')?.id, sim.store.getGroupByDisplayName('Beta')?.id];
    ws.writeDirectory(dir(list, ['Beta', 'Alpha']));
    sim.clearRequests();
    await apply(ws);
    expect(conflicts(sim)).toEqual([]);
    expect(sim.store.getGroup(g1 ?? '')?.displayName).toBe('Beta');
    expect(sim.store.getGroup(g2 ?? '')?.displayName).toBe('Alpha');
    expect(groups(sim)).toEqual(['Alpha: b@example.com', 'Beta: a@example.com']);
    await expectConverged(ws);

    ws.writeDirectory(dir(list, ['BETA', 'Alpha']));
    await apply(ws);
    expect(sim.store.getGroup(g1 ?? '')?.displayName).toBe('BETA');
    await expectConverged(ws);
  });

  it('a rename onto a name held by an account that is not moving is reported, not retried into a 409 each run', async () => {
    sim = await startSim();
    const hand = sim.store.createUser({ userName: 'taken@example.com', active: true });
    const ws = createWorkspace(sim, { directory: dir([user('u-1', 'a@example.com'), user('u-2', 'b@example.com')]) });
    await apply(ws);
    ws.writeDirectory(dir([user('u-1', 'taken@example.com', { givenName: 'a' }), user('u-2', 'b@example.com')]));
    sim.clearRequests();
    const run = await apply(ws);
    expect(run.plan.skipped).toContainEqual(
      expect.objectContaining({
        kind: 'user',
        ref: 'a@example.com',
        reason: expect.stringContaining(`userName change to taken@example.com not applied: platform user ${hand.id}`),
      }),
    );
    expect(conflicts(sim)).toEqual([]);
    expect(users(sim)).toEqual(['a@example.com u-1 active', 'b@example.com u-2 active', 'taken@example.com - active']);
    await expectConverged(ws);
  });

  describe("an address reused: a leaver's userName given to a colleague", () => {
    const before = dir([user('u-1', 'a@example.com'), user('u-2', 'b@example.com'), user('u-3', 'c@example.com')]);
    // a@ leaves; b@ is renamed to a@ (the address is recycled for a colleague), in the same export.
    const after = dir([user('u-2', 'a@example.com', { givenName: 'b' }), user('u-3', 'c@example.com')]);
    const deleting = { provisioning: { deprovision: { action: 'delete' } } };

    it("with deprovision.action delete: the leaver is deleted first and the colleague's rename lands in the same run, no 409", async () => {
      sim = await startSim();
      const ws = createWorkspace(sim, { directory: before, config: deleting });
      await apply(ws);
      const [a, b] = [byName(sim, 'a@example.com').id, byName(sim, 'b@example.com').id];
      ws.writeDirectory(after);
      sim.clearRequests();
      const run = await apply(ws);
      expect(run.plan.skipped).toEqual([]);
      expect(run.plan.users.delete.map((d) => [d.id, d.reason, d.freesName])).toEqual([[a, 'not-in-source', true]]);
      expect(renderPlan(run.plan, { color: false })).toMatch(
        /Users to delete \(1\)\n\s+a@example.com\s+not-in-source\s+first: another user takes its userName/,
      );
      expect(conflicts(sim)).toEqual([]);
      // The leaver's account is deleted, never handed over: the colleague keeps their own account.
      expect(writeRequests(sim).map((r) => `${r.method} ${r.path.split('/').pop()}`)).toEqual([`DELETE ${a}`, `PATCH ${b}`]);
      expect(sim.store.getUser(a)).toBeUndefined();
      expect(sim.store.getUser(b)).toMatchObject({ externalId: 'u-2', userName: 'a@example.com', active: true });
      expect(users(sim)).toEqual(['a@example.com u-2 active', 'c@example.com u-3 active']);
      expect(groups(sim)).toEqual(['Alpha: ', 'Beta: a@example.com']);
      await expectConverged(ws);
    });

    it('while the guard holds the deletion, the rename waits with its reason; the approved run deletes and renames together', async () => {
      sim = await startSim();
      const ws = createWorkspace(sim, {
        directory: before,
        config: { provisioning: { ...deleting.provisioning, guards: { maxDeletes: 0 } } },
      });
      await apply(ws);
      const a = byName(sim, 'a@example.com').id;
      ws.writeDirectory(after);
      sim.clearRequests();
      const held = await apply(ws);
      expect(held.plan.guard.tripped).toBe(true);
      expect(held.plan.users.delete.map((d) => [d.id, d.freesName])).toEqual([[a, undefined]]);
      expect(held.plan.skipped).toEqual([
        expect.objectContaining({
          kind: 'user',
          ref: 'b@example.com',
          reason: `userName change to a@example.com not applied: platform user ${a} (a@example.com), whose deletion the guard holds: it follows the approved deletion`,
        }),
      ]);
      expect(conflicts(sim)).toEqual([]);
      expect(users(sim)).toEqual(['a@example.com u-1 active', 'b@example.com u-2 active', 'c@example.com u-3 active']);

      const approved = await apply(ws, { allowDeletes: true });
      expect(approved.plan.skipped).toEqual([]);
      expect(conflicts(sim)).toEqual([]);
      expect(users(sim)).toEqual(['a@example.com u-2 active', 'c@example.com u-3 active']);
      await expectConverged(ws);
    });

    it('with the default action deactivate: the leaver keeps the address, the rename is reported with what frees it, nothing is handed over', async () => {
      sim = await startSim();
      const ws = createWorkspace(sim, { directory: before });
      await apply(ws);
      const a = byName(sim, 'a@example.com').id;
      ws.writeDirectory(after);
      sim.clearRequests();
      const run = await apply(ws);
      expect(run.plan.users.deactivate.map((d) => d.id)).toEqual([a]);
      expect(run.plan.skipped).toEqual([
        expect.objectContaining({
          kind: 'user',
          ref: 'b@example.com',
          reason: expect.stringContaining('a deactivated account that keeps its userName until it is deleted'),
        }),
      ]);
      expect(conflicts(sim)).toEqual([]);
      expect(users(sim)).toEqual(['a@example.com u-1 inactive', 'b@example.com u-2 active', 'c@example.com u-3 active']);
      // The next run says the same, and still writes nothing.
      sim.clearRequests();
      const again = await apply(ws);
      expect(again.plan.skipped.map((k) => k.reason)).toEqual([expect.stringContaining('a deactivated account that keeps its userName')]);
      expect(writeRequests(sim)).toEqual([]);
    });
  });

  describe('a team dissolved while another takes its name', () => {
    const people = ['u-1', 'u-2', 'u-3', 'u-4'].map((ext, i) => user(ext, `${'abcd'.charAt(i)}@example.com`));
    const teams = (list: Directory['groups']): Directory => ({ users: people, groups: list });
    const before = teams([
      { externalId: 'g-1', displayName: 'Platform', members: ['u-1', 'u-2'] },
      { externalId: 'g-2', displayName: 'Infra', members: ['u-3'] },
      { externalId: 'g-3', displayName: 'Data', members: ['u-4'] },
    ]);

    it('Platform is dissolved and Infra is renamed to Platform: the old group is deleted first, the rename lands in the same run, no 409', async () => {
      sim = await startSim();
      const ws = createWorkspace(sim, { directory: before });
      await apply(ws);
      const infra = sim.store.getGroupByDisplayName('Infra')?.id;
      ws.writeDirectory(
        teams([{ externalId: 'g-2', displayName: 'Platform', members: ['u-3'] }, before.groups[2] as Directory['groups'][number]]),
      );
      sim.clearRequests();
      const run = await apply(ws);
      expect(run.plan.skipped).toEqual([]);
      expect(run.plan.groups.delete.map((d) => [d.displayName, d.freesName])).toEqual([['Platform', true]]);
      expect(renderPlan(run.plan, { color: false })).toMatch(
        /Groups to delete \(1\)\n\s+Platform\s+g-1\s+first: another group takes its name/,
      );
      expect(conflicts(sim)).toEqual([]);
      // The delete went first: it precedes the PATCH that takes the name.
      expect(writeRequests(sim).map((r) => r.method)).toEqual(['DELETE', 'PATCH']);
      expect(sim.store.getGroup(infra ?? '')?.displayName).toBe('Platform');
      expect(groups(sim)).toEqual(['Data: d@example.com', 'Platform: c@example.com']);
      await expectConverged(ws);
    });

    it('while the guard holds the deletions, the rename waits with its reason; the approved run deletes and renames together', async () => {
      sim = await startSim();
      const ws = createWorkspace(sim, { directory: before, config: { provisioning: { guards: { maxDeletes: 0 } } } });
      await apply(ws);
      ws.writeDirectory(
        teams([{ externalId: 'g-2', displayName: 'Platform', members: ['u-3'] }, before.groups[2] as Directory['groups'][number]]),
      );
      sim.clearRequests();
      const held = await apply(ws);
      expect(held.plan.guard.tripped).toBe(true);
      expect(held.plan.groups.delete.map((d) => [d.displayName, d.freesName])).toEqual([['Platform', undefined]]);
      expect(held.plan.skipped).toEqual([
        expect.objectContaining({ kind: 'group', ref: 'Infra', reason: expect.stringContaining('whose deletion the guard holds') }),
      ]);
      expect(conflicts(sim)).toEqual([]);
      expect(groups(sim)).toEqual(['Data: d@example.com', 'Infra: c@example.com', 'Platform: a@example.com b@example.com']);

      const approved = await apply(ws, { allowDeletes: true });
      expect(approved.plan.skipped).toEqual([]);
      expect(conflicts(sim)).toEqual([]);
      expect(groups(sim)).toEqual(['Data: d@example.com', 'Platform: c@example.com']);
      await expectConverged(ws);
    });
  });
});
