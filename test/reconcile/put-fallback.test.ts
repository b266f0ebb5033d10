/**
 * A platform without PATCH (501): attribute updates and membership changes still converge
 * through GET + PUT. Without discovery the first 501 teaches the client to stop trying
 * PATCH; with discovery /ServiceProviderConfig says so and no PATCH is ever sent.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/simulator/index.ts';
import {
  SCIM,
  createWorkspace,
  memberNames,
  people,
  startSim,
  writeRequests,
  type DirUser,
  type Directory,
} from '../helpers/reconcile-harness.ts';

function dir(users: DirUser[], members: DirUser[]): Directory {
  return { users, groups: [{ externalId: 'g-team', displayName: 'Team', members: members.map((u) => u.externalId) }] };
}

const methods = (sim: Simulator): string[] => writeRequests(sim).map((r) => r.method);

describe('PUT fallback when PATCH is not supported', () => {
  let sim: Simulator;
  afterEach(() => sim.close());

  it('without discovery: one PATCH answered 501, then only PUTs; updates and memberships converge', async () => {
    sim = await startSim({ patchSupported: false });
    const users = people(1, 6);
    const ws = createWorkspace(sim, { directory: dir(users, users.slice(0, 4)), config: { platform: { scim: { discover: false } } } });

    // Sequential, so "after the first 501" is well defined.
    const first = await ws.applyInProcess({ concurrency: 1 });
    expect(first.result.failed).toEqual([]);
    const patches = writeRequests(sim).filter((r) => r.method === 'PATCH');
    expect(patches.map((r) => r.status)).toEqual([501]);
    const firstPatch = writeRequests(sim).findIndex((r) => r.method === 'PATCH');
    expect(methods(sim).slice(firstPatch + 1)).toEqual(['PUT']);
    expect(memberNames(sim, 'Team')).toEqual(
      users
        .slice(0, 4)
        .map((u) => u.userName)
        .sort(),
    );

    // Source changes: two renames, one member out, two in; plus drift of a third user's name on the platform.
    const renamed = users.map((u) =>
      u.externalId === 'u-2' || u.externalId === 'u-5' ? { ...u, familyName: `Renamed${u.externalId}` } : u,
    );
    ws.writeDirectory(dir(renamed, [...users.slice(1, 4), users[4] as DirUser, users[5] as DirUser]));
    const u6 = sim.store.getUserByUserName('user6@example.com');
    sim.store.updateUser(u6?.id ?? '', { displayName: 'Drifted' });
    sim.clearRequests();
    const second = await ws.applyInProcess({ concurrency: 1 });
    expect(second.result.failed).toEqual([]);
    expect(second.result.succeeded).toMatchObject({ 'user.update': 3, 'group.members': 1 });
    // A fresh client learns it again with one 501; everything after it is a PUT.
    expect(
      writeRequests(sim)
        .filter((r) => r.method === 'PATCH')
        .map((r) => r.status),
    ).toEqual([501]);
    const at = writeRequests(sim).findIndex((r) => r.method === 'PATCH');
    expect([...new Set(methods(sim).slice(at + 1))]).toEqual(['PUT']);
    expect(methods(sim).filter((m) => m === 'PUT')).toHaveLength(4); // 3 users + 1 group
    expect(
      writeRequests(sim)
        .filter((r) => r.method === 'PUT')
        .every((r) => r.status === 200),
    ).toBe(true);

    expect(sim.store.getUserByUserName('user2@example.com')?.name?.familyName).toBe('Renamedu-2');
    expect(sim.store.getUserByUserName('user5@example.com')?.name?.familyName).toBe('Renamedu-5');
    expect(sim.store.getUserByUserName('user6@example.com')?.displayName).toBe('Given6 Family6');
    expect(memberNames(sim, 'Team')).toEqual([
      'user2@example.com',
      'user3@example.com',
      'user4@example.com',
      'user5@example.com',
      'user6@example.com',
    ]);

    expect((await ws.planInProcess()).summary.changes).toBe(0);
  });

  it('with discovery: ServiceProviderConfig says patch unsupported, so no PATCH is ever sent', async () => {
    sim = await startSim({ patchSupported: false });
    const users = people(1, 4);
    const ws = createWorkspace(sim, { directory: dir(users, users) });
    const first = await ws.applyInProcess();
    expect(first.result.failed).toEqual([]);
    ws.writeDirectory(
      dir(
        users.map((u) => ({ ...u, givenName: 'Changed' })),
        users.slice(2),
      ),
    );
    const second = await ws.applyInProcess();
    expect(second.result.failed).toEqual([]);
    expect(second.result.succeeded).toMatchObject({ 'user.update': 4, 'group.members': 1 });
    expect(sim.requests.some((r) => r.path === `${SCIM}/ServiceProviderConfig`)).toBe(true);
    expect(sim.requests.filter((r) => r.method === 'PATCH')).toEqual([]);
    expect(sim.store.users().every((u) => u.name?.givenName === 'Changed')).toBe(true);
    expect(memberNames(sim, 'Team')).toEqual(['user3@example.com', 'user4@example.com']);
  });
});
