/**
 * One bad object never stops the others: a create the platform rejects (an attribute it
 * refuses) and an update refused for one user id are each recorded with their reason in
 * result.failed, everything else is applied, and the CLI exits 1.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/simulator/index.ts';
import {
  SCIM,
  createWorkspace,
  memberNames,
  people,
  person,
  startSim,
  type DirUser,
  type Directory,
  type Workspace,
} from '../helpers/reconcile-harness.ts';

function dir(users: DirUser[]): Directory {
  return { users, groups: [{ externalId: 'g-all', displayName: 'Everyone', members: users.map((u) => u.externalId) }] };
}

describe('per-object failure isolation', () => {
  let sim: Simulator;
  let ws: Workspace;
  let user3Id: string;

  beforeAll(async () => {
    sim = await startSim();
    // `emails` may be overridden from a source attribute; one user's value is not a list,
    // which the platform refuses with 400 (the source itself accepts it).
    ws = createWorkspace(sim, {
      directory: dir(people(1, 8)),
      config: { provisioning: { mapping: { user: { emails: 'attributes.emailOverride' } } } },
    });
    await ws.applyInProcess();
    user3Id = sim.store.getUserByUserName('user3@example.com')?.id ?? '';
    expect(user3Id).not.toBe('');

    const renamed = people(1, 8).map((u) => ({ ...u, familyName: `New${u.externalId}` }));
    const added = [person(9), person(10, { attributes: { emailOverride: 'not-a-list' } }), person(11), person(12)];
    ws.writeDirectory(dir([...renamed, ...added]));
    // The platform refuses any update of user3 (e.g. a locked account).
    sim.setFaults([{ kind: 'status', method: 'PATCH', pathPrefix: `${SCIM}/Users/${user3Id}`, status: 400 }]);
  });
  afterAll(() => sim.close());

  it('records each failure with its reason, applies everything else, exits 1', async () => {
    const run = await ws.apply();
    expect(run.code, run.stderr).toBe(1);
    const { failed, succeeded } = run.out.result;
    const byRef = Object.fromEntries(failed.map((f) => [`${f.action} ${f.ref}`, f]));
    expect(Object.keys(byRef).sort()).toEqual([
      'group.members Everyone',
      'user.create user10@example.com',
      'user.update user3@example.com',
    ]);
    expect(byRef['user.create user10@example.com']).toMatchObject({ code: 'E_REJECTED' });
    expect(byRef['user.create user10@example.com']?.message).toContain('emails must be an array');
    expect(byRef['user.update user3@example.com']).toMatchObject({ code: 'E_REJECTED' });
    expect(byRef['user.update user3@example.com']?.message).toContain('HTTP 400');
    // The membership change for the group went through for everyone but the user who does not exist.
    expect(byRef['group.members Everyone']?.message).toContain('user10@example.com');

    expect(succeeded).toMatchObject({ 'user.create': 3, 'user.update': 7 });
    expect(run.out.result.aborted).toBeUndefined();
    for (const n of [1, 2, 4, 5, 6, 7, 8])
      expect(sim.store.getUserByUserName(`user${n}@example.com`)?.name?.familyName, `user${n}`).toBe(`Newu-${n}`);
    expect(sim.store.getUser(user3Id)?.name?.familyName).toBe('Family3');
    for (const n of [9, 11, 12]) expect(sim.store.getUserByUserName(`user${n}@example.com`)?.active, `user${n}`).toBe(true);
    expect(sim.store.getUserByUserName('user10@example.com')).toBeUndefined();
    expect(memberNames(sim, 'Everyone')).toEqual([...people(1, 9), ...people(11, 12)].map((u) => u.userName).sort());
  });

  it('once the platform accepts user3 again, only the still-bad user keeps failing', async () => {
    sim.setFaults([]);
    const run = await ws.applyInProcess();
    expect(run.plan.users.update.map((u) => u.userName)).toEqual(['user3@example.com']);
    expect(run.result.failed.map((f) => `${f.action} ${f.ref}`).sort()).toEqual([
      'group.members Everyone',
      'user.create user10@example.com',
    ]);
    expect(sim.store.getUser(user3Id)?.name?.familyName).toBe('Newu-3');
  });
});
