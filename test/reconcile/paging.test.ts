/**
 * Paging robustness end to end: a server that caps pages at 7 and lies about or shortens
 * its pages while the platform is listed. The plan must still see every existing object:
 * a missed one would be created twice (or, worse, never deprovisioned).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/simulator/index.ts';
import {
  SCIM,
  createWorkspace,
  people,
  requestsTo,
  startSim,
  usersNamed,
  writeRequests,
  type Directory,
  type Workspace,
} from '../helpers/reconcile-harness.ts';

function dir(count: number): Directory {
  const users = people(1, count);
  const groups = [0, 1, 2].map((k) => ({
    externalId: `g-${k}`,
    displayName: `Group ${k}`,
    members: users.filter((_, i) => i % 3 === k).map((u) => u.externalId),
  }));
  // More groups than one page holds, so group listing pages too.
  for (let k = 3; k < 10; k++) groups.push({ externalId: `g-${k}`, displayName: `Group ${k}`, members: [] });
  return { users, groups };
}

describe('paging robustness during the platform listing', () => {
  let sim: Simulator;
  let ws: Workspace;

  beforeAll(async () => {
    sim = await startSim({ maxPageSize: 7 });
    ws = createWorkspace(sim, { directory: dir(20) });
    const first = await ws.applyInProcess();
    expect(first.result.failed).toEqual([]);
    expect(sim.store.counts()).toEqual({ users: 20, groups: 10 });
    ws.writeDirectory(dir(30));
    sim.setFaults([
      { kind: 'lying-page', method: 'GET', pathPrefix: `${SCIM}/Users`, pageSize: 3 },
      { kind: 'capped-page', method: 'GET', pathPrefix: `${SCIM}/Groups`, pageSize: 4 },
    ]);
    sim.clearRequests();
  });
  afterAll(() => sim.close());

  it('plans exactly the missing users although every page was short or lying', async () => {
    const { code, out: plan, stderr } = await ws.plan();
    expect(code, stderr).toBe(0);
    // The faults really shaped the listing: many small pages, none larger than the cap.
    const userPages = requestsTo(sim, 'GET', `${SCIM}/Users`).filter((r) => r.faults?.includes('lying-page'));
    expect(userPages.length).toBeGreaterThanOrEqual(Math.ceil(20 / 3));
    expect(requestsTo(sim, 'GET', `${SCIM}/Groups`).filter((r) => r.faults?.includes('capped-page')).length).toBeGreaterThanOrEqual(3);

    expect(plan.users.create.map((u) => u.externalId).sort()).toEqual(
      people(21, 30)
        .map((u) => u.externalId)
        .sort(),
    );
    expect(plan.users.update).toEqual([]);
    expect(plan.users.deactivate).toEqual([]);
    expect(plan.groups.create).toEqual([]);
    expect(plan.groups.delete).toEqual([]);
    // Only the new users' memberships: the existing ones were all seen.
    expect(plan.summary.membersAdd).toBe(10);
    expect(plan.summary.membersRemove).toBe(0);
  });

  it('apply under the same faults leaves each user exactly once; the next run is a no-op', async () => {
    const run = await ws.applyInProcess();
    expect(run.result.failed).toEqual([]);
    expect(run.result.succeeded['user.create']).toBe(10);
    for (const u of people(1, 30)) expect(usersNamed(sim, u.userName), u.userName).toBe(1);
    expect(sim.store.counts()).toEqual({ users: 30, groups: 10 });

    sim.clearRequests();
    const again = await ws.applyInProcess();
    expect(again.plan.summary.changes).toBe(0);
    expect(writeRequests(sim)).toEqual([]);
  });
});
