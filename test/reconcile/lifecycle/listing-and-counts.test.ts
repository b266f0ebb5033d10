/**
 * What the engine does when the platform's answers are not the whole truth: a listing that
 * skipped a managed object (deleted + created between pages, same totalResults), a member
 * removal the server acknowledged but did not perform, and a member PATCH that succeeded
 * although other members of the same task could not be resolved.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { RequestLogEntry, Simulator } from '../../../src/simulator/index.ts';
import { SCIM, createWorkspace, people, requestsTo, startSim, type DirUser, type Directory } from '../../helpers/reconcile-harness.ts';
import { apply, byName, expectConverged, groups, users } from './support.ts';

function dir(list: DirUser[], members: DirUser[] = list): Directory {
  return { users: list, groups: [{ externalId: 'g-all', displayName: 'Everyone', members: members.map((u) => u.externalId) }] };
}

describe('listing gaps and honest counts', () => {
  let sim: Simulator;
  afterEach(() => sim.close());

  it('leaver skipped by the listing (an object deleted and another created between two pages): confirmed by id and still deprovisioned', async () => {
    let hook: ((e: RequestLogEntry) => void) | undefined;
    // Pages of one object: the pager cannot overlap pages to notice the shift (with pages of
    // two or more it re-reads the listing itself: test/platform/quirks-reconcile.test.ts), so
    // the engine's read by id is what catches the gap.
    sim = await startSim({ onRequest: (e) => hook?.(e), maxPageSize: 1 });
    // First in the listing: a user created by hand, before any of ours.
    const early = sim.store.createUser({ userName: 'early@example.com', active: true });
    const ws = createWorkspace(sim, {
      directory: dir(people(1, 5)),
      config: { platform: { scim: { pageSize: 1 } }, provisioning: { guards: { maxDeletePercent: 50 } } },
    });
    await apply(ws);
    // Second in the listing: after the first page loses an object, an offset client skips it.
    const leaver = byName(sim, 'user1@example.com').id;

    ws.writeDirectory(dir(people(2, 5)));
    hook = (e) => {
      if (e.method !== 'GET' || e.path !== `${SCIM}/Users` || e.query['startIndex'] !== '1') return;
      hook = undefined;
      // After the first page: one object goes, another arrives at the end; totalResults is unchanged.
      sim.store.deleteUser(early.id);
      sim.store.createUser({ userName: 'late@example.com', active: true });
    };
    sim.clearRequests();
    const run = await apply(ws);
    expect(requestsTo(sim, 'GET', `${SCIM}/Users/${leaver}`).map((r) => r.status)).toEqual([200]);
    expect(run.plan.warnings).toContainEqual(expect.objectContaining({ code: 'listing-incomplete', ref: `Users/${leaver}` }));
    expect(run.plan.users.deactivate).toEqual([expect.objectContaining({ id: leaver, reason: 'not-in-source' })]);
    expect(ws.readLedger()?.users[leaver]).toMatchObject({ externalId: 'u-1', deactivatedAt: expect.any(Number) });
    expect(users(sim)).toEqual([
      'late@example.com - active',
      'user1@example.com u-1 inactive',
      'user2@example.com u-2 active',
      'user3@example.com u-3 active',
      'user4@example.com u-4 active',
      'user5@example.com u-5 active',
    ]);
    expect(groups(sim)).toEqual(['Everyone: user2@example.com user3@example.com user4@example.com user5@example.com']);
    await expectConverged(ws);
  });

  it('a member removal the server acknowledged but did not perform is reported as not converging on the next run', async () => {
    let hook: ((e: RequestLogEntry) => void) | undefined;
    sim = await startSim({ onRequest: (e) => hook?.(e) });
    const list = people(1, 5);
    const ws = createWorkspace(sim, { directory: dir(list) });
    await apply(ws);
    const gone = byName(sim, 'user5@example.com').id;
    const group = sim.store.getGroupByDisplayName('Everyone');
    // The server answers 200 to the member removal, and keeps the member.
    hook = (e) => {
      if (e.method === 'PATCH' && e.path === `${SCIM}/Groups/${group?.id}` && /"op":"remove"/.test(JSON.stringify(e.body))) {
        const g = sim.store.getGroup(group?.id ?? '');
        if (!g?.members?.some((m) => m.value === gone))
          sim.store.updateGroup(g?.id ?? '', { members: [...(g?.members ?? []), { value: gone }] });
      }
    };
    ws.writeDirectory(dir(list, list.slice(0, 4)));
    const first = await apply(ws);
    expect(first.result.membersRemoved).toBe(1);
    expect(first.plan.warnings).toEqual([]);
    expect(ws.readLedger()?.groups[group?.id ?? '']?.removed).toEqual({ at: expect.any(Number), ids: [gone] });

    const second = await ws.planInProcess();
    expect(second.memberships[0]?.remove.map((m) => m.id)).toEqual([gone]);
    expect(second.warnings).toEqual([expect.objectContaining({ code: 'removal-not-converging', ref: 'Everyone ← user5@example.com' })]);

    // Once the server behaves, the removal lands and the warning goes away.
    hook = undefined;
    await apply(ws);
    const third = await expectConverged(ws);
    expect(third.warnings).toEqual([]);
    expect(groups(sim)).toEqual([
      `Everyone: ${list
        .slice(0, 4)
        .map((u) => u.userName)
        .sort()
        .join(' ')}`,
    ]);
  });

  it('a member PATCH that succeeded is counted even when other members of the task could not be added', async () => {
    sim = await startSim();
    const list = people(1, 3);
    const ws = createWorkspace(sim, { directory: dir(list) });
    await apply(ws);
    // A joiner whose create is refused (the platform rejects the POST), and one that works.
    const joiners = people(1, 5);
    ws.writeDirectory(dir(joiners));
    sim.setFaults([{ kind: 'status', status: 400, method: 'POST', pathPrefix: `${SCIM}/Users`, times: 1 }]);
    const run = await ws.applyInProcess({ concurrency: 1 });
    expect(run.result.failed.map((f) => [f.action, f.code])).toEqual([
      ['user.create', 'E_REJECTED'],
      ['group.members', 'E_NOT_FOUND'],
    ]);
    // The other joiner was added by the PATCH that did go through, and that is what is counted.
    expect(run.result.membersAdded).toBe(1);
    expect(groups(sim)).toEqual(['Everyone: user1@example.com user2@example.com user3@example.com user5@example.com']);
  });
});
