/**
 * A repeated task attempt reads before it writes: a PATCH, member PATCH or DELETE whose effect
 * the platform already shows (the first attempt reached it, its completion mark was lost) is
 * not sent again; one the platform does not show yet is sent. Against the simulator over a
 * real socket.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { patchHolds, readBeforeWrite } from '../../src/reconcile/read-before-write.ts';
import { requestsTo, scimHarness, seedUsers, type ScimHarness } from '../platform/helpers/scim.ts';

let h: ScimHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const writes = (harness: ScimHarness): number => harness.sim.requests.filter((r) => ['PATCH', 'PUT', 'DELETE'].includes(r.method)).length;

describe('read before write', () => {
  it('a PATCH already applied is skipped; one not applied yet is sent', async () => {
    h = await scimHarness({ tokens: [{ token: 'test-token' }] });
    const [user] = seedUsers(h.sim, 1);
    const target = readBeforeWrite(h.scim);
    const ops = [{ op: 'replace' as const, path: 'name.familyName', value: 'Renamed' }];
    await target.patch('Users', user!.id, ops);
    expect(writes(h)).toBe(1);
    expect(h.sim.store.getUser(user!.id)?.name?.familyName).toBe('Renamed');
    // The repeat: the platform already shows the change.
    await target.patch('Users', user!.id, ops);
    await target.patch('Users', user!.id, [{ op: 'replace', path: 'active', value: true }]);
    expect(writes(h)).toBe(1);
    expect(requestsTo(h.sim, 'GET', `/Users/${user!.id}`).length).toBeGreaterThanOrEqual(3);
  });

  it('member PATCH skipped when the adds are present and the removes absent; DELETE skipped when the object is gone', async () => {
    h = await scimHarness({ tokens: [{ token: 'test-token' }] });
    const [a, b] = seedUsers(h.sim, 2);
    const group = h.sim.store.createGroup({ displayName: 'Team', members: [{ value: a!.id }] });
    const target = readBeforeWrite(h.scim);
    await target.patchMembers(group.id, [a!.id], [b!.id]);
    expect(writes(h)).toBe(0);
    await target.patchMembers(group.id, [b!.id], []);
    expect(writes(h)).toBe(1);
    expect(
      h.sim.store
        .getGroup(group.id)
        ?.members?.map((m) => m.value)
        .sort(),
    ).toEqual([a!.id, b!.id].sort());
    await target.delete('Users', a!.id);
    expect(writes(h)).toBe(2);
    await target.delete('Users', a!.id);
    expect(writes(h)).toBe(2);
  });

  it('patchHolds: key order does not matter; an operation that cannot be applied locally does not hold', () => {
    const user = {
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
      id: '1',
      userName: 'u',
      name: { givenName: 'A', familyName: 'B' },
    };
    expect(patchHolds(user, [{ op: 'replace', path: 'name', value: { familyName: 'B', givenName: 'A' } }])).toBe(true);
    expect(patchHolds(user, [{ op: 'replace', path: 'name.familyName', value: 'C' }])).toBe(false);
    expect(patchHolds(user, [{ op: 'replace', path: 'emails[type eq "work"]', value: 'x' }])).toBe(false);
  });
});
