/**
 * Lifecycle events where an account could be handed to the wrong person: matching is global
 * (externalId claims before any name), an account never passes from one in-source person to
 * another, and a new externalId under a leaver's login does not get the leaver's account
 * (recycled-identity.test.ts has the ways out).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Simulator } from '../../../src/simulator/index.ts';
import { createWorkspace, startSim, writeRequests } from '../../helpers/reconcile-harness.ts';
import { apply, byName, expectConverged, groups, user, users } from './support.ts';

describe('identity lifecycle', () => {
  let sim: Simulator;
  afterEach(() => sim.close());

  it('rename plus rehire: emp-100 alice@ becomes alice.old@ while new hire emp-200 takes alice@ (listed first): two people, two accounts', async () => {
    sim = await startSim();
    const alice = user('emp-100', 'alice@example.com', { givenName: 'Alice', familyName: 'Old' });
    const ws = createWorkspace(sim, {
      directory: {
        users: [alice, user('emp-101', 'bob@example.com')],
        groups: [{ externalId: 'g-eng', displayName: 'Eng', members: ['emp-100'] }],
      },
    });
    await apply(ws);
    const oldId = byName(sim, 'alice@example.com').id;

    const hire = user('emp-200', 'alice@example.com', { givenName: 'Alice', familyName: 'New' });
    const renamed = { ...alice, userName: 'alice.old@example.com', emails: 'alice.old@example.com' };
    ws.writeDirectory({
      users: [hire, renamed, user('emp-101', 'bob@example.com')],
      groups: [{ externalId: 'g-eng', displayName: 'Eng', members: ['emp-100', 'emp-200'] }],
    });
    sim.clearRequests();
    const run = await apply(ws);

    // The plan never rewrites emp-100's account to the new hire.
    expect(run.plan.users.update.map((u) => [u.id, u.externalId])).toEqual([[oldId, 'emp-100']]);
    expect(run.plan.users.create.map((c) => c.externalId)).toEqual(['emp-200']);
    expect(writeRequests(sim).filter((r) => r.status === 409)).toEqual([]);
    expect(sim.store.getUser(oldId)).toMatchObject({
      externalId: 'emp-100',
      userName: 'alice.old@example.com',
      name: { familyName: 'Old' },
    });
    expect(byName(sim, 'alice@example.com')).toMatchObject({ externalId: 'emp-200', name: { familyName: 'New' } });
    expect(users(sim)).toEqual([
      'alice.old@example.com emp-100 active',
      'alice@example.com emp-200 active',
      'bob@example.com emp-101 active',
    ]);
    expect(groups(sim)).toEqual(['Eng: alice.old@example.com alice@example.com']);
    await expectConverged(ws);
  });

  it("a new externalId with the userName of a leaver: not the old account but an identity conflict; the account stays its owner's", async () => {
    sim = await startSim();
    const carol = user('emp-300', 'carol@example.com');
    const ws = createWorkspace(sim, {
      directory: {
        users: [
          carol,
          user('emp-1', 'one@example.com'),
          user('emp-2', 'two@example.com'),
          user('emp-3', 'three@example.com'),
          user('emp-4', 'four@example.com'),
        ],
        groups: [],
      },
    });
    await apply(ws);
    const id = byName(sim, 'carol@example.com').id;

    ws.writeDirectory({
      users: [
        user('emp-1', 'one@example.com'),
        user('emp-2', 'two@example.com'),
        user('emp-3', 'three@example.com'),
        user('emp-4', 'four@example.com'),
      ],
      groups: [],
    });
    await apply(ws);
    expect(sim.store.getUser(id)?.active).toBe(false);

    ws.writeDirectory({
      users: [
        user('emp-301', 'carol@example.com', { familyName: 'emp-300' }),
        user('emp-1', 'one@example.com'),
        user('emp-2', 'two@example.com'),
        user('emp-3', 'three@example.com'),
        user('emp-4', 'four@example.com'),
      ],
      groups: [],
    });
    const back = await apply(ws);
    expect(back.plan.users.create).toEqual([]);
    expect(back.plan.users.reactivate).toEqual([]);
    expect(back.plan.conflicts?.map((c) => [c.externalId, c.account.id, c.account.owner])).toEqual([['emp-301', id, 'emp-300']]);
    expect(sim.store.getUser(id)).toMatchObject({ externalId: 'emp-300', active: false });
    expect(sim.store.counts().users).toBe(5);
    expect(ws.readLedger()?.users[id]?.externalId).toBe('emp-300');
    await expectConverged(ws);
  });

  it('returner: a leaver who comes back gets the same account reactivated and the same groups', async () => {
    sim = await startSim();
    const everyone = ['u-1', 'u-2', 'u-3', 'u-4', 'u-5'].map((x, i) => user(x, `p${i + 1}@example.com`));
    const dir = (list: typeof everyone) => ({
      users: list,
      groups: [{ externalId: 'g-all', displayName: 'All', members: list.map((u) => u.externalId) }],
    });
    const ws = createWorkspace(sim, { directory: dir(everyone) });
    await apply(ws);
    const id = byName(sim, 'p5@example.com').id;
    ws.writeDirectory(dir(everyone.slice(0, 4)));
    await apply(ws);
    expect(users(sim)).toContain('p5@example.com u-5 inactive');
    expect(groups(sim)).toEqual(['All: p1@example.com p2@example.com p3@example.com p4@example.com']);

    ws.writeDirectory(dir(everyone));
    const back = await apply(ws);
    expect(back.plan.users.create).toEqual([]);
    expect(back.plan.users.reactivate.map((u) => u.id)).toEqual([id]);
    expect(users(sim)).toEqual(everyone.map((u) => `${u.userName} ${u.externalId} active`).sort());
    expect(groups(sim)).toEqual(['All: p1@example.com p2@example.com p3@example.com p4@example.com p5@example.com']);
    expect(ws.readLedger()?.users[id]).toEqual({ externalId: 'u-5' });
    await expectConverged(ws);
  });

  it('merger collision: two source entries with one userName never move the account from its owner, whatever their order', async () => {
    sim = await startSim();
    const smithA = user('a-7', 'j.smith@example.com', { familyName: 'Smith' });
    const others = [user('a-1', 'x1@example.com'), user('a-2', 'x2@example.com')];
    const ws = createWorkspace(sim, { directory: { users: [smithA, ...others], groups: [] } });
    await apply(ws);
    const id = byName(sim, 'j.smith@example.com').id;

    // The acquired company's directory is merged in: another J. Smith, same login, listed first.
    const smithB = user('b-3', 'J.Smith@example.com', { familyName: 'Smyth' });
    ws.writeDirectory({ users: [smithB, smithA, ...others], groups: [] });
    const run = await apply(ws);
    expect(run.plan.rejected).toContainEqual(expect.objectContaining({ kind: 'user', externalId: 'a-7', userName: 'j.smith@example.com' }));
    // b-3 may not take a-7's account, and it cannot get the name while a-7 holds it.
    expect(run.plan.users.update).toEqual([]);
    expect(run.plan.users.deactivate).toEqual([]);
    expect(run.plan.skipped).toContainEqual(
      expect.objectContaining({ kind: 'user', ref: 'J.Smith@example.com', reason: expect.stringContaining(`platform user ${id}`) }),
    );
    expect(run.plan.protected).toContainEqual(expect.objectContaining({ kind: 'user', id, externalId: 'a-7' }));
    expect(users(sim)).toEqual(['j.smith@example.com a-7 active', 'x1@example.com a-1 active', 'x2@example.com a-2 active']);
    await expectConverged(ws);

    // Listed the other way round, a-7 is valid again and keeps its account; b-3 is rejected.
    ws.writeDirectory({ users: [smithA, smithB, ...others], groups: [] });
    const again = await apply(ws);
    expect(again.plan.rejected).toContainEqual(expect.objectContaining({ externalId: 'b-3' }));
    expect(sim.store.getUser(id)).toMatchObject({ externalId: 'a-7', name: { familyName: 'Smith' }, active: true });
    expect(sim.store.counts().users).toBe(3);
    await expectConverged(ws);
  });

  it('merger collision: a source user whose name another in-source person still holds is created only once the holder renames away', async () => {
    sim = await startSim();
    const ws = createWorkspace(sim, {
      directory: { users: [user('u-1', 'one@example.com'), user('u-9', 'nine@example.com')], groups: [] },
    });
    await apply(ws);
    const id = byName(sim, 'one@example.com').id;
    // u-2 claims one@ by name, but the account is u-1's by externalId, and u-1 keeps it.
    ws.writeDirectory({
      users: [user('u-2', 'one@example.com'), user('u-1', 'ONE@example.com'), user('u-9', 'nine@example.com')],
      groups: [],
    });
    const run = await ws.planInProcess();
    expect(run.rejected).toContainEqual(expect.objectContaining({ externalId: 'u-1', userName: 'ONE@example.com' }));
    expect(run.users.update).toEqual([]);
    expect(run.users.create).toEqual([]);
    expect(run.users.deactivate).toEqual([]);
    expect(run.protected).toContainEqual(expect.objectContaining({ id, externalId: 'u-1' }));
  });
});
