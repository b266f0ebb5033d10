/**
 * Entra ID delta rounds (`users/delta`, `groups/delta` with `members@delta`) through the
 * real credential and Graph over HTTPS: the first call reads in full and hands out a cursor;
 * a round after edits sees exactly those edits, each changed group with its complete member
 * list; a change below a nested group, and an expired delta token (410), are answered by a
 * full read.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { entraIdSourceSchema } from '../../src/sources/entra/schema.ts';
import { EntraIdSource } from '../../src/sources/entra/source.ts';
import { startTestTenant, type TestTenant } from '../helpers/entra-tenant.ts';

let t: TestTenant;
let s: EntraIdSource;

beforeAll(async () => {
  t = await startTestTenant({ users: 300, groups: 12 });
  s = new EntraIdSource(entraIdSourceSchema.parse(t.source({ pageSize: 100 })), { configDir: t.dir });
}, 60_000);

afterAll(async () => {
  await s?.close();
  await t?.close();
});

describe('Entra ID delta rounds', () => {
  let cursor = '';

  it('the first call reads in full and returns a cursor', async () => {
    const r = await s.changes(undefined);
    expect(r.kind).toBe('full');
    if (r.kind !== 'full') return;
    expect(r.reason).toBe('no cursor');
    expect(r.state.users).toHaveLength(300);
    expect(r.state.groups).toHaveLength(12);
    cursor = r.cursor;
    // Paged delta rounds: 300 users at 100 a page.
    expect(t.sim.requests.filter((q) => q.route === 'users-delta')).toHaveLength(3);
  }, 30_000);

  it('nothing changed: an empty round', async () => {
    const r = await s.changes(cursor);
    expect(r).toMatchObject({ kind: 'delta', users: { upserted: [], removed: [] }, groups: { upserted: [], removed: [] } });
    if (r.kind === 'delta') cursor = r.cursor;
  }, 30_000);

  it('a round after edits sees exactly the edits', async () => {
    const d = t.sim.directory;
    const disabled = d.user(`user000010@${d.domain}`)!;
    d.updateUser(disabled.id, (u) => {
      u.accountEnabled = false;
    });
    const renamed = d.user(`user000020@${d.domain}`)!;
    d.updateUser(renamed.id, (u) => {
      u.userPrincipalName = `renamed020@${d.domain}`;
      u.mail = `renamed020@${d.domain}`;
    });
    const added = d.addUser({ userPrincipalName: `newcomer@${d.domain}`, givenName: 'New', surname: 'Comer' });
    const deleted = d.user(`user000030@${d.domain}`)!;
    const g0 = d.groupByName('Group 0000')!;
    const g5 = d.groupByName('Group 0005')!;
    d.deleteUser(deleted.id); // also leaves Group 0006 (30 % 12)
    d.addMember(g5.id, { type: 'user', id: added.id });
    const leaver = g0.members.find((m) => m.type === 'user')!;
    d.removeMember(g0.id, leaver.id);

    const r = await s.changes(cursor);
    expect(r.kind).toBe('delta');
    if (r.kind !== 'delta') return;
    cursor = r.cursor;
    expect(r.users.upserted.map((u) => u.userName).sort()).toEqual(
      [`newcomer@${d.domain}`, `renamed020@${d.domain}`, `user000010@${d.domain}`].sort(),
    );
    expect(r.users.upserted.find((u) => u.externalId === disabled.id)!.active).toBe(false);
    expect(r.users.upserted.find((u) => u.externalId === renamed.id)!.userName).toBe(`renamed020@${d.domain}`);
    expect(r.users.removed).toEqual([deleted.id]);
    // Each changed group whole: its complete member list as a full read would give it.
    const byId = new Map(r.groups.upserted.map((g) => [g.externalId, g]));
    const complete = (groupId: string): string[] =>
      d
        .group(groupId)!
        .members.filter((m) => m.type === 'user')
        .map((m) => m.id)
        .sort();
    expect(byId.get(g5.id)!.members).toContain(added.id);
    expect(byId.get(g5.id)!.members.sort()).toEqual(complete(g5.id));
    expect(byId.get(g0.id)!.members).not.toContain(leaver.id);
    const g6 = d.groupByName('Group 0006')!;
    expect(byId.get(g6.id)!.members).not.toContain(deleted.id);
    expect(byId.get(g6.id)!.members.sort()).toEqual(complete(g6.id));
    expect(r.groups.upserted).toHaveLength(3);
    expect(r.groups.removed).toEqual([]);

    const again = await s.changes(cursor);
    expect(again).toMatchObject({ kind: 'delta', users: { upserted: [], removed: [] }, groups: { upserted: [] } });
    if (again.kind === 'delta') cursor = again.cursor;
  }, 30_000);

  it('a member added to a nested group reaches its parents: a full read', async () => {
    const d = t.sim.directory;
    const g2 = d.groupByName('Group 0002')!;
    const u = d.user(`user000001@${d.domain}`)!;
    d.addMember(g2.id, { type: 'user', id: u.id });
    const r = await s.changes(cursor);
    expect(r).toMatchObject({ kind: 'full', reason: 'cannot apply alone', detail: 'nesting changed' });
    if (r.kind !== 'full') return;
    const g0 = r.state.groups.find((g) => g.displayName === 'Group 0000')!;
    expect(g0.members).toContain(u.id);
    cursor = r.cursor;
  }, 30_000);

  it('an expired delta token (410) is answered by a full read and a fresh cursor', async () => {
    t.sim.expireDeltaTokens();
    const r = await s.changes(cursor);
    expect(r).toMatchObject({ kind: 'full', reason: 'cursor expired' });
    if (r.kind !== 'full') return;
    expect(r.state.users).toHaveLength(300);
    const next = await s.changes(r.cursor);
    expect(next.kind).toBe('delta');
    if (next.kind === 'delta') cursor = next.cursor;
  }, 30_000);

  it('after a restart a member change is read in full (the user scope of the last read is gone)', async () => {
    const restarted = new EntraIdSource(entraIdSourceSchema.parse(t.source({ pageSize: 100 })), { configDir: t.dir });
    try {
      const d = t.sim.directory;
      const g5 = d.groupByName('Group 0005')!;
      d.addMember(g5.id, { type: 'user', id: d.user(`user000002@${d.domain}`)!.id });
      const r = await restarted.changes(cursor);
      expect(r).toMatchObject({ kind: 'full', reason: 'cannot apply alone' });
    } finally {
      await restarted.close();
    }
  }, 30_000);

  it('with users.filter there is no change mechanism: users/delta takes no filter', () => {
    const filtered = new EntraIdSource(entraIdSourceSchema.parse(t.source({ users: { filter: "department eq 'Sales'" } })), {
      configDir: t.dir,
    });
    expect(filtered.changeMechanism()).toBeUndefined();
    expect(s.changeMechanism()).toMatchObject({ name: 'graph-delta' });
  });
});
