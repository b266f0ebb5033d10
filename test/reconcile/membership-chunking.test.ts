/**
 * Membership deltas are chunked to platform.scim.maxMembersPerPatch member values per
 * PATCH: 250 members at 100 per request is exactly 3 requests, and the group ends up with
 * exactly the source's members (also after a large removal).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PatchOperation } from '../../src/platform/scim/types.ts';
import type { Simulator } from '../../src/simulator/index.ts';
import {
  SCIM,
  createWorkspace,
  memberNames,
  people,
  startSim,
  type DirUser,
  type Directory,
  type Workspace,
} from '../helpers/reconcile-harness.ts';

function dir(users: DirUser[], members: DirUser[]): Directory {
  return {
    users,
    groups: [
      { externalId: 'g-big', displayName: 'Big', members: members.map((u) => u.externalId) },
      { externalId: 'g-small', displayName: 'Small', members: ['u-1'] },
    ],
  };
}

/** Member values carried by one PATCH body (adds as a value list, removes as filters or a value list). */
function memberValues(body: unknown): number {
  const ops = (body as { Operations?: PatchOperation[] }).Operations ?? [];
  return ops.reduce((n, op) => n + (Array.isArray(op.value) ? op.value.length : op.op === 'remove' ? 1 : 0), 0);
}

describe('membership chunking', () => {
  let sim: Simulator;
  let ws: Workspace;
  const all = people(1, 250);

  beforeAll(async () => {
    sim = await startSim();
    ws = createWorkspace(sim, { directory: dir(all, all), config: { platform: { scim: { maxMembersPerPatch: 100 } } } });
  });
  afterAll(() => sim.close());

  const bigPatches = () => {
    const id = sim.store.getGroupByDisplayName('Big')?.id;
    return sim.requests.filter((r) => r.method === 'PATCH' && r.path === `${SCIM}/Groups/${id}`);
  };

  it('adds 250 members in exactly 3 PATCH requests of at most 100 values', async () => {
    const run = await ws.apply();
    expect(run.code, run.stderr).toBe(0);
    expect(run.out.result.membersAdded).toBe(251);
    const patches = bigPatches();
    expect(patches).toHaveLength(3);
    expect(patches.map((r) => memberValues(r.body))).toEqual([100, 100, 50]);
    expect(patches.every((r) => r.status === 200)).toBe(true);
    expect(memberNames(sim, 'Big')).toEqual(all.map((u) => u.userName).sort());
    expect(memberNames(sim, 'Small')).toEqual(['user1@example.com']);
  });

  it('removes 120 members in 2 chunks (100 + 20); membership is exact afterwards', async () => {
    const keep = all.slice(120);
    ws.writeDirectory(dir(all, keep));
    sim.clearRequests();
    const run = await ws.applyInProcess();
    expect(run.result.failed).toEqual([]);
    expect(run.result.membersRemoved).toBe(120);
    expect(bigPatches().map((r) => memberValues(r.body))).toEqual([100, 20]);
    expect(memberNames(sim, 'Big')).toEqual(keep.map((u) => u.userName).sort());
  });
});
