/**
 * Present but invalid is present: a source entry that is rejected still names a person or a
 * group, and nothing is deprovisioned, deleted or removed from a group because of the typo.
 * And a member the source lists is never removed, managed or not.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { renderPlan } from '../../../src/reconcile/render.ts';
import type { Simulator } from '../../../src/simulator/index.ts';
import { createWorkspace, startSim, writeRequests, type DirUser, type Directory } from '../../helpers/reconcile-harness.ts';
import { apply, byName, expectConverged, groups, user, users } from './support.ts';

const team = (): DirUser[] => [
  user('u-1', 'ada@example.com'),
  user('u-2', 'bo@example.com'),
  user('u-3', 'cleo@example.com'),
  user('u-4', 'dan@example.com'),
];

function dir(list: DirUser[], extraGroups: Directory['groups'] = []): Directory {
  return { users: list, groups: [{ externalId: 'g-team', displayName: 'Team', members: ['u-1', 'u-2', 'u-3', 'u-4'] }, ...extraGroups] };
}

/** Requests that deactivate, delete or remove a member. */
function destructive(sim: Simulator) {
  return writeRequests(sim).filter(
    (r) => r.method === 'DELETE' || /"active","value":false|"op":"remove"/.test(JSON.stringify(r.body ?? null)),
  );
}

describe('present but invalid', () => {
  let sim: Simulator;
  afterEach(() => sim.close());

  it('typo in one entry (invalid e-mail): the person stays active and in their groups, the plan lists them as protected', async () => {
    sim = await startSim();
    const ws = createWorkspace(sim, { directory: dir(team()) });
    await apply(ws);
    const id = byName(sim, 'cleo@example.com').id;

    const typo = team().map((u) => (u.externalId === 'u-3' ? { ...u, emails: 'cleo@@example' } : u));
    ws.writeDirectory(dir(typo));
    sim.clearRequests();
    const run = await apply(ws);
    expect(run.plan.rejected).toEqual([
      expect.objectContaining({ kind: 'user', externalId: 'u-3', userName: 'cleo@example.com' }),
      expect.objectContaining({ kind: 'group', externalId: 'g-team', member: 'u-3' }),
    ]);
    expect(run.plan.protected).toEqual([expect.objectContaining({ kind: 'user', id, externalId: 'u-3' })]);
    // The human plan says so too.
    expect(renderPlan(run.plan, { color: false })).toMatch(
      /Protected \(source entry rejected\) \(1\)\n\s+user\s+cleo@example\.com\s+not deprovisioned and not removed from any group/,
    );
    expect(run.plan.users.deactivate).toEqual([]);
    expect(run.plan.memberships).toEqual([]);
    expect(destructive(sim)).toEqual([]);
    expect(users(sim)).toEqual([
      'ada@example.com u-1 active',
      'bo@example.com u-2 active',
      'cleo@example.com u-3 active',
      'dan@example.com u-4 active',
    ]);
    expect(groups(sim)).toEqual(['Team: ada@example.com bo@example.com cleo@example.com dan@example.com']);
    await expectConverged(ws);

    // Fixed: back to normal, nothing protected.
    ws.writeDirectory(dir(team()));
    const fixed = await expectConverged(ws);
    expect(fixed.protected).toEqual([]);
  });

  it('typo in one entry (duplicate userName of a managed user): the entry holding the typo keeps its account', async () => {
    sim = await startSim();
    const ws = createWorkspace(sim, { directory: dir(team()) });
    await apply(ws);
    const dan = byName(sim, 'dan@example.com').id;
    // dan's entry is given ada's userName by mistake: it is the later one, so it is rejected.
    const typo = team().map((u) => (u.externalId === 'u-4' ? { ...u, userName: 'ADA@example.com' } : u));
    ws.writeDirectory(dir(typo));
    sim.clearRequests();
    const run = await apply(ws);
    expect(run.plan.rejected).toEqual([
      expect.objectContaining({ externalId: 'u-4', userName: 'ADA@example.com' }),
      expect.objectContaining({ kind: 'group', member: 'u-4' }),
    ]);
    expect(run.plan.protected).toEqual([expect.objectContaining({ kind: 'user', id: dan, externalId: 'u-4' })]);
    expect(destructive(sim)).toEqual([]);
    expect(writeRequests(sim)).toEqual([]);
    expect(users(sim)).toEqual([
      'ada@example.com u-1 active',
      'bo@example.com u-2 active',
      'cleo@example.com u-3 active',
      'dan@example.com u-4 active',
    ]);
    expect(groups(sim)).toEqual(['Team: ada@example.com bo@example.com cleo@example.com dan@example.com']);
    await expectConverged(ws);
  });

  it('rejected group entry: the group is neither deleted nor emptied, and the plan says why', async () => {
    sim = await startSim();
    const ops = { externalId: 'g-ops', displayName: 'Ops', members: ['u-1', 'u-2'] };
    const ws = createWorkspace(sim, { directory: dir(team(), [ops]) });
    await apply(ws);
    const id = sim.store.getGroupByDisplayName('Ops')?.id;
    // The displayName is lost in an edit: the entry is rejected, its externalId still readable.
    ws.writeDirectory(dir(team(), [{ externalId: 'g-ops', members: ['u-1', 'u-2'] } as unknown as Directory['groups'][number]]));
    sim.clearRequests();
    const run = await apply(ws);
    expect(run.plan.rejected).toEqual([expect.objectContaining({ kind: 'group', externalId: 'g-ops' })]);
    expect(run.plan.groups.delete).toEqual([]);
    expect(run.plan.protected).toEqual([expect.objectContaining({ kind: 'group', id, externalId: 'g-ops' })]);
    expect(destructive(sim)).toEqual([]);
    expect(groups(sim)).toEqual([
      'Ops: ada@example.com bo@example.com',
      'Team: ada@example.com bo@example.com cleo@example.com dan@example.com',
    ]);
    await expectConverged(ws);
  });

  it('a rejected row without any readable identity holds the deprovisioning it could explain (guard), and nothing else', async () => {
    sim = await startSim();
    const ws = createWorkspace(sim, {
      directory: dir(team()),
      config: { provisioning: { guards: { maxDeletes: 100, maxDeletePercent: 100 } } },
    });
    await apply(ws);
    // dan leaves and an entry nobody can identify appears: it could be dan with a typo.
    ws.writeDirectory({
      users: [...team().slice(0, 3), 'garbage' as unknown as DirUser, user('u-5', 'eli@example.com')],
      groups: [{ externalId: 'g-team', displayName: 'Team', members: ['u-1', 'u-2', 'u-3', 'u-5'] }],
    });
    sim.clearRequests();
    const run = await ws.applyInProcess();
    expect(run.result.failed).toEqual([]);
    expect(run.plan.guard.tripped).toBe(true);
    expect(run.plan.guard.reasons).toEqual([expect.stringContaining('1 source user entries were rejected without a readable identity')]);
    expect(destructive(sim)).toEqual([]);
    // Creates and additions still happen: only what the unknown entry could be is held.
    expect(users(sim)).toEqual([
      'ada@example.com u-1 active',
      'bo@example.com u-2 active',
      'cleo@example.com u-3 active',
      'dan@example.com u-4 active',
      'eli@example.com u-5 active',
    ]);
    expect(groups(sim)).toEqual(['Team: ada@example.com bo@example.com cleo@example.com dan@example.com eli@example.com']);
  });

  it('admin-created member listed by the source group: added, never removed; an unknown member an admin added is left alone', async () => {
    sim = await startSim();
    const hand = sim.store.createUser({ userName: 'hana@example.com', displayName: 'Hana (by hand)', active: true });
    const stranger = sim.store.createUser({ userName: 'contractor@example.com', active: true });
    const ws = createWorkspace(sim, {
      directory: {
        users: [...team(), user('u-9', 'hana@example.com')],
        groups: [{ externalId: 'g-team', displayName: 'Team', members: ['u-1', 'u-9'] }],
      },
    });
    const first = await apply(ws);
    expect(first.plan.skipped).toContainEqual(
      expect.objectContaining({ kind: 'user', ref: 'hana@example.com', reason: expect.stringContaining('not managed') }),
    );
    expect(groups(sim)).toEqual(['Team: ada@example.com hana@example.com']);
    expect(sim.store.getUser(hand.id)?.displayName).toBe('Hana (by hand)'); // the account itself is not ours

    const team2 = sim.store.getGroupByDisplayName('Team');
    sim.store.updateGroup(team2?.id ?? '', { members: [...(team2?.members ?? []), { value: stranger.id }] });
    const second = await ws.planInProcess();
    expect(second.memberships).toEqual([]);
    expect(second.summary.changes).toBe(0);
    expect(groups(sim)).toEqual(['Team: ada@example.com contractor@example.com hana@example.com']);
  });
});
