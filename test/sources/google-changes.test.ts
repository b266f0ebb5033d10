/**
 * Google Workspace change detection through the real google-auth-library and
 * @googleapis/admin clients against the simulator over a socket: an administrator's edit is
 * recorded in the admin audit log, listed by the Reports API only after the simulated data
 * lag, and then read again from the Directory API as a complete record.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SourceChanges, SourceDelta } from '../../src/sources/changes.ts';
import { supportsChanges } from '../../src/sources/changes.ts';
import { SCOPES, googleWorkspaceSourceSchema, type GoogleWorkspaceSourceInput } from '../../src/sources/google/schema.ts';
import { GoogleWorkspaceSource } from '../../src/sources/google/source.ts';
import { READ_SCOPES, startTestWorkspace, type TestWorkspace } from '../helpers/google-workspace.ts';

const LAG_MS = 400;
let t: TestWorkspace;

const source = (over: Partial<GoogleWorkspaceSourceInput> = {}): GoogleWorkspaceSource =>
  new GoogleWorkspaceSource(googleWorkspaceSourceSchema.parse(t.source({ changes: { overlapSeconds: 5 }, ...over })), {
    configDir: t.dir,
  });

function delta(r: SourceChanges): SourceDelta {
  if (r.kind !== 'delta') throw new Error(`expected a delta, got a full read (${r.reason}: ${r.detail ?? ''})`);
  return r;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const activityCalls = (): number => t.sim.requests.filter((q) => q.route === 'activities').length;

beforeAll(async () => {
  t = await startTestWorkspace({ users: 40, groups: 8, delegatedScopes: [...READ_SCOPES, SCOPES.reports] });
  t.sim.workspace.activity.lagMs = LAG_MS;
  // Seeding is admin activity too: let it become visible and age out of the overlap window.
}, 30_000);

afterAll(async () => {
  await t?.close();
});

describe('Google Workspace changes from the admin audit log', () => {
  let s: GoogleWorkspaceSource;
  let cursor = '';
  const ws = () => t.sim.workspace;
  const d = () => t.sim.workspace.domain;

  it('without `changes` configured there is no mechanism', () => {
    const plain = new GoogleWorkspaceSource(googleWorkspaceSourceSchema.parse(t.source()), { configDir: t.dir });
    expect(plain.changeMechanism()).toBeUndefined();
    expect(supportsChanges(plain)).toBe(false);
  });

  it('the first call reads in full; the events already listed are taken as seen', async () => {
    s = source();
    expect(s.changeMechanism()).toMatchObject({ name: 'google-reports', pollIntervalMs: 60_000 });
    await sleep(LAG_MS + 50);
    const r = await s.changes(undefined);
    expect(r).toMatchObject({ kind: 'full', reason: 'no cursor' });
    if (r.kind !== 'full') return;
    expect(r.state.users).toHaveLength(41);
    cursor = r.cursor;
    const idle = delta(await s.changes(cursor));
    expect(idle.users.upserted).toEqual([]);
    expect(idle.cursor).toBe(cursor);
  });

  it('a user created, suspended and renamed appears in the next changes() after the lag, not before', async () => {
    const created = ws().addUser({ primaryEmail: `newhire@${d()}`, givenName: 'New', familyName: 'Hire', orgUnitPath: '/Dept1' });
    const suspended = ws().updateUser(`user00003@${d()}`, (u) => {
      u.suspended = true;
    });
    const renamed = ws().updateUser(`user00004@${d()}`, (u) => {
      u.primaryEmail = `renamed04@${d()}`;
    });
    const before = delta(await s.changes(cursor));
    expect(before.users.upserted).toEqual([]);
    expect(before.cursor).toBe(cursor);
    await sleep(LAG_MS + 50);
    const r = delta(await s.changes(cursor));
    const byId = new Map(r.users.upserted.map((u) => [u.externalId, u]));
    expect([...byId.keys()].sort()).toEqual([created.id, suspended.id, renamed.id].sort());
    expect(byId.get(suspended.id)?.active).toBe(false);
    expect(byId.get(renamed.id)?.userName).toBe(`renamed04@${d()}`);
    expect(byId.get(created.id)).toMatchObject({ userName: `newhire@${d()}`, givenName: 'New', active: true });
    expect(r.users.removed).toEqual([]);
    expect(r.changedAt[created.id]).toBeGreaterThan(0);
    cursor = r.cursor;
    // The overlap window lists these events again; they are not reported twice.
    const again = delta(await s.changes(cursor));
    expect(again.users.upserted).toEqual([]);
  });

  it('a deleted user is removed by its id (found among the deleted users)', async () => {
    const gone = ws().user(`user00005@${d()}`)!;
    ws().removeUser(`user00005@${d()}`);
    await sleep(LAG_MS + 50);
    const r = delta(await s.changes(cursor));
    expect(r.users.removed).toEqual([gone.id]);
    expect(r.users.upserted).toEqual([]);
    expect(t.sim.requests.some((q) => q.route === 'users' && q.query['showDeleted'] === 'true')).toBe(true);
    cursor = r.cursor;
  });

  it('a user moved out of the scope (org unit) is removed once the Directory read shows it', async () => {
    const scoped = source({ users: { query: "orgUnitPath='/Dept1'" } });
    const first = await scoped.changes(undefined);
    expect(first.kind).toBe('full');
    const mover = ws().user(`user00011@${d()}`)!;
    ws().updateUser(`user00011@${d()}`, (u) => {
      u.orgUnitPath = '/Dept2';
    });
    await sleep(LAG_MS + 50);
    const r = delta(await scoped.changes(first.cursor));
    expect(r.users.removed).toEqual([mover.id]);
    expect(r.users.upserted).toEqual([]);
  });

  it('a member added to a group: the group with its complete member list', async () => {
    const g = ws().group(`group0006@${d()}`)!;
    const current = ws()
      .listMembers(g)
      .map((m) => ({ key: m.email ?? m.id }));
    const joiner = ws().user(`newhire@${d()}`)!;
    ws().setMembers(g.email, [...current, { key: joiner.primaryEmail }]);
    await sleep(LAG_MS + 50);
    const r = delta(await s.changes(cursor));
    expect(r.groups.upserted).toHaveLength(1);
    const up = r.groups.upserted[0]!;
    expect(up.externalId).toBe(g.id);
    // Every in-scope member, not only the one added (user00005 was deleted earlier).
    const expected = current.map((m) => ws().user(m.key)?.id).filter((x): x is string => x !== undefined);
    expect(up.members.sort()).toEqual([...expected, joiner.id].sort());
    cursor = r.cursor;
  });

  it('a renamed group and a change to a nested group are answered as they must be', async () => {
    ws().renameGroup(`group0007@${d()}`, 'Group Seven');
    await sleep(LAG_MS + 50);
    const renamed = delta(await s.changes(cursor));
    expect(renamed.groups.upserted.map((g) => g.displayName)).toEqual(['Group Seven']);
    cursor = renamed.cursor;
    // group0001 is nested in group0000: its change reaches the parent.
    const g1 = ws().group(`group0001@${d()}`)!;
    ws().setMembers(g1.email, [
      ...ws()
        .listMembers(g1)
        .map((m) => ({ key: m.email ?? m.id })),
      { key: `user00020@${d()}` },
    ]);
    await sleep(LAG_MS + 50);
    const nested = await s.changes(cursor);
    expect(nested).toMatchObject({ kind: 'full', reason: 'cannot apply alone' });
    if (nested.kind === 'full') cursor = nested.cursor;
  });

  it('many events are read over several Reports API pages', async () => {
    for (let i = 0; i < 1200; i++)
      ws().updateUser(`user000${String(20 + (i % 10)).padStart(2, '0')}@${d()}`, (u) => (u.suspended = !u.suspended));
    await sleep(LAG_MS + 50);
    const calls = activityCalls();
    const r = delta(await s.changes(cursor));
    expect(activityCalls() - calls).toBeGreaterThanOrEqual(2);
    expect(t.sim.requests.some((q) => q.route === 'activities' && q.query['pageToken'] !== undefined)).toBe(true);
    expect(r.users.upserted).toHaveLength(10);
    cursor = r.cursor;
  });
});
