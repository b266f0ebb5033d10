/**
 * Quotes and backslashes end to end: names that must be escaped in SCIM filters survive
 * the YAML source, the POST, the ambiguous-create lookup (a filter query) and matching on
 * the next run, which must be a no-op.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/simulator/index.ts';
import { SCIM, createWorkspace, requestsTo, startSim, usersNamed, writeRequests, type Workspace } from '../helpers/reconcile-harness.ts';

const OBRIEN = {
  externalId: 'ext-"o\\b"',
  userName: 'o"brien\\x@example.com',
  givenName: 'Seán',
  familyName: 'O"Brien',
  emails: 'obrien@example.com',
};
const SLASH = {
  externalId: 'ext\\slash',
  userName: 'back\\slash"q@example.com',
  givenName: 'Back',
  familyName: 'Slash\\',
  emails: 'slash@example.com',
};
const GROUP = { externalId: 'g-"rd"\\', displayName: 'R&D "core" \\ team', members: [OBRIEN.externalId, SLASH.externalId] };

describe('escaping end to end', () => {
  let sim: Simulator;
  let ws: Workspace;

  beforeAll(async () => {
    // One POST of each kind is processed but its answer lost: the client must find the
    // object with a filter on these very values instead of creating it again.
    sim = await startSim({
      faults: [
        { kind: 'reset-after-commit', method: 'POST', pathPrefix: `${SCIM}/Users`, times: 1 },
        { kind: 'reset-after-commit', method: 'POST', pathPrefix: `${SCIM}/Groups`, times: 1 },
      ],
    });
    ws = createWorkspace(sim, { directory: { users: [OBRIEN, SLASH], groups: [GROUP] } });
  });
  afterAll(() => sim.close());

  it('provisions users and a group whose names need escaping, exactly once', async () => {
    const run = await ws.apply();
    expect(run.code, run.stderr).toBe(0);
    expect(run.out.result.failed).toEqual([]);
    expect(requestsTo(sim, 'POST', `${SCIM}/`).filter((r) => r.status === 0)).toHaveLength(2);
    // The lookups after the resets were filter queries carrying the escaped values.
    const filters = sim.requests.map((r) => r.query['filter']).filter((f): f is string => f !== undefined);
    expect(filters.some((f) => f.includes('\\"') && f.includes('\\\\'))).toBe(true);

    expect(usersNamed(sim, OBRIEN.userName)).toBe(1);
    expect(usersNamed(sim, SLASH.userName)).toBe(1);
    expect(sim.store.counts()).toEqual({ users: 2, groups: 1 });
    const obrien = sim.store.getUserByUserName(OBRIEN.userName);
    expect(obrien).toMatchObject({ externalId: OBRIEN.externalId, name: { givenName: 'Seán', familyName: 'O"Brien' } });
    const group = sim.store.getGroupByDisplayName(GROUP.displayName);
    expect(group?.externalId).toBe(GROUP.externalId);
    expect((group?.members ?? []).map((m) => m.value).sort()).toEqual([obrien?.id, sim.store.getUserByUserName(SLASH.userName)?.id].sort());
  });

  it('the second apply is a no-op', async () => {
    sim.clearRequests();
    const again = await ws.applyInProcess();
    expect(again.plan.summary.changes).toBe(0);
    expect(again.plan.skipped).toEqual([]);
    expect(writeRequests(sim)).toEqual([]);
  });
});
