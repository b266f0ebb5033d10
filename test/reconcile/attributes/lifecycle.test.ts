/**
 * User attributes through the whole lifecycle, against the simulator over sockets and (where
 * exit codes and output matter) the real CLI: joiner, second run, mover, a value leaving the
 * source, a value that does not fit its type, unmanaged users. Each step asserts the exact
 * platform state after apply and a zero-change plan after.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Simulator } from '../../../src/simulator/index.ts';
import { createWorkspace, type Directory, startSim, writeRequests, type Workspace } from '../../helpers/reconcile-harness.ts';
import { ATTRS_PATH, VALUES_PATH, attributeConfig, attributeWrites, staff, userId, valueReads, valuesOf } from './support.ts';

const ANA = 'user1@example.com';
const BEN = 'user2@example.com';
const CLEO = 'user3@example.com';
const DANA = 'user4@example.com';

function directory(edit: (users: Directory['users']) => void = () => undefined): Directory {
  const users = [
    staff(
      1,
      { l: 'eu', department: 'Finance', costCentre: '4711', clearance: 'TRUE', customers: 'acme;globex' },
      { displayName: 'Ana One' },
    ),
    staff(2, { l: 'us', department: 'Sales', costCentre: 12, clearance: false, customers: ['initech'] }),
    staff(3, { l: 'eu' }),
  ];
  edit(users);
  return { users, groups: [{ externalId: 'g-1', displayName: 'Analysts', members: ['u-1', 'u-2'] }] };
}

describe('user attributes: joiner → second run → mover → value gone → bad value', () => {
  let sim: Simulator;
  let ws: Workspace;

  beforeAll(async () => {
    sim = await startSim();
    ws = createWorkspace(sim, { directory: directory(), config: attributeConfig() });
  });
  afterAll(() => sim.close());

  it('joiner: definitions are created once and every value is written after the account exists and before group memberships', async () => {
    const run = await ws.apply();
    expect(run.code, run.stderr).toBe(0);
    const { plan, result } = run.out;
    expect(plan.schemaVersion).toBe(2);
    expect(result.failed).toEqual([]);
    expect(plan.attributes?.definitions.create.map((d) => `${d.name}:${d.type}`)).toEqual([
      'region:string',
      'department:string',
      'costCentre:number',
      'clearance:boolean',
      'customers:string_array',
    ]);
    expect(
      sim.attributes
        .definitions()
        .map((d) => `${d.name}:${d.type}`)
        .sort(),
    ).toEqual(['clearance:boolean', 'costCentre:number', 'customers:string_array', 'department:string', 'region:string']);
    expect(sim.requests.filter((r) => r.method === 'POST' && r.path.startsWith(ATTRS_PATH))).toHaveLength(5);

    expect(valuesOf(sim, ANA)).toEqual({
      region: 'EU',
      department: 'Finance',
      costCentre: 4711,
      clearance: true,
      customers: ['acme', 'globex'],
    });
    expect(valuesOf(sim, BEN)).toEqual({ region: 'US', department: 'Sales', costCentre: 12, clearance: false, customers: ['initech'] });
    expect(valuesOf(sim, CLEO)).toEqual({ region: 'EU' });
    // New users on new definitions: nothing to read.
    expect(valueReads(sim)).toBe(0);
    expect(plan.attributes?.reads).toEqual({ platform: 0, fromLedger: 0, newUsers: 3 });
    expect(result.succeeded).toMatchObject({ 'user.create': 3, 'attribute.create': 5, 'user.attributes': 3 });

    // Order: every user created before its values; every value written before the first group request.
    const at = (pred: (r: (typeof sim.requests)[number]) => boolean): number[] => sim.requests.flatMap((r, i) => (pred(r) ? [i] : []));
    const userCreates = at((r) => r.method === 'POST' && r.path === '/api/scim/v2/Users');
    const upserts = at((r) => r.method === 'POST' && r.path.startsWith(VALUES_PATH));
    const groupWrites = at((r) => r.method !== 'GET' && r.path.startsWith('/api/scim/v2/Groups'));
    expect(upserts).toHaveLength(5 + 5 + 1);
    expect(Math.max(...userCreates)).toBeLessThan(Math.min(...upserts));
    expect(Math.max(...upserts)).toBeLessThan(Math.min(...groupWrites));

    const ledger = ws.readLedger();
    expect(Object.keys(ledger?.attributes?.definitions ?? {}).sort()).toEqual([
      'clearance',
      'costCentre',
      'customers',
      'department',
      'region',
    ]);
    expect(Object.values(ledger?.attributes?.definitions ?? {}).every((d) => d.created)).toBe(true);
    expect(ledger?.attributes?.values[userId(sim, CLEO)]?.values).toEqual({
      region: 'EU',
      department: null,
      costCentre: null,
      clearance: null,
      customers: null,
    });
  });

  it('second run: zero writes and, with the ledger, zero value reads', async () => {
    sim.clearRequests();
    const plan = await ws.plan();
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.out.summary.changes).toBe(0);
    expect(plan.out.attributes?.users).toEqual([]);
    expect(plan.out.attributes?.reads).toEqual({ platform: 0, fromLedger: 3, newUsers: 0 });
    const apply = await ws.apply();
    expect(apply.code, apply.stderr).toBe(0);
    expect(writeRequests(sim)).toEqual([]);
    expect(attributeWrites(sim)).toEqual([]);
    expect(valueReads(sim)).toBe(0);
    // One definitions list per run is all the attribute API sees.
    expect(sim.requests.filter((r) => r.path.startsWith(ATTRS_PATH)).map((r) => r.method)).toEqual(['GET', 'GET']);
  });

  it('mover: a region change is applied in the same run as the SCIM update, and reported as a mover', async () => {
    ws.writeDirectory(
      directory((users) => {
        users[0] = { ...users[0]!, displayName: 'Ana Moved', attributes: { ...users[0]!.attributes, l: 'us' } };
        // Ben changes department only: no SCIM change at all.
        users[1] = { ...users[1]!, attributes: { ...users[1]!.attributes, department: 'Marketing' } };
      }),
    );
    const text = await ws.cli(['plan', '--config', ws.configPath]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain('Movers (an access-relevant attribute changes) (2)');
    expect(text.stdout).toMatch(/user1@example\.com\s+region: "EU" → "US"/);
    expect(text.stdout).toMatch(/user2@example\.com\s+department: "Sales" → "Marketing"/);

    sim.clearRequests();
    const run = await ws.apply();
    expect(run.code, run.stderr).toBe(0);
    const { plan, result } = run.out;
    expect(plan.users.update.map((u) => u.userName)).toEqual([ANA]);
    expect(plan.attributes?.users).toEqual([
      {
        id: userId(sim, ANA),
        externalId: 'u-1',
        userName: ANA,
        changes: [{ attribute: 'region', before: 'EU', after: 'US', takesAway: true }],
      },
      {
        id: userId(sim, BEN),
        externalId: 'u-2',
        userName: BEN,
        changes: [{ attribute: 'department', before: 'Sales', after: 'Marketing', takesAway: true }],
      },
    ]);
    expect(plan.attributes?.movers.map((m) => [m.userName, m.changes])).toEqual([
      [ANA, [{ attribute: 'region', before: 'EU', after: 'US' }]],
      [BEN, [{ attribute: 'department', before: 'Sales', after: 'Marketing' }]],
    ]);
    expect(result.failed).toEqual([]);
    const anaId = userId(sim, ANA);
    const patch = sim.requests.findIndex((r) => r.method === 'PATCH' && r.path === `/api/scim/v2/Users/${anaId}`);
    const upsert = sim.requests.findIndex(
      (r) => r.method === 'POST' && r.path.startsWith(VALUES_PATH) && (r.body as { userId?: string }).userId === anaId,
    );
    expect(patch).toBeGreaterThanOrEqual(0);
    expect(upsert).toBeGreaterThan(patch);
    expect(sim.store.getUser(anaId)?.displayName).toBe('Ana Moved');
    expect(valuesOf(sim, ANA)).toEqual({
      region: 'US',
      department: 'Finance',
      costCentre: 4711,
      clearance: true,
      customers: ['acme', 'globex'],
    });
    expect(valuesOf(sim, BEN)).toMatchObject({ department: 'Marketing' });
    expect((await ws.plan()).out.summary.changes).toBe(0);
  });

  it('a value gone from the source: cleared where the config says clear, kept where it says keep', async () => {
    ws.writeDirectory(
      directory((users) => {
        users[0] = { ...users[0]!, displayName: 'Ana Moved', attributes: { ...users[0]!.attributes, l: 'us' } };
        const { department: _dropped, ...benRest } = users[1]!.attributes as Record<string, unknown>;
        users[1] = { ...users[1]!, attributes: benRest }; // department: whenMissing keep
        users[2] = { ...users[2]!, attributes: {} }; // region: whenMissing clear
      }),
    );
    const { plan, result } = await ws.applyInProcess();
    expect(result.failed).toEqual([]);
    expect(plan.attributes?.users).toEqual([
      {
        id: userId(sim, CLEO),
        externalId: 'u-3',
        userName: CLEO,
        changes: [{ attribute: 'region', before: 'EU', after: null, takesAway: true }],
      },
    ]);
    expect(plan.guard.attributes).toMatchObject({ attributeClears: 1, attributeClearUsers: 1, attributeUsers: 3 });
    expect(valuesOf(sim, CLEO)).toEqual({});
    expect(valuesOf(sim, BEN)).toMatchObject({ department: 'Marketing' });
    expect((await ws.planInProcess()).summary.changes).toBe(0);
  });

  it('a value that does not fit its type is rejected with a reason; the platform keeps its value and the rest is written', async () => {
    ws.writeDirectory(
      directory((users) => {
        users[0] = { ...users[0]!, displayName: 'Ana Moved', attributes: { ...users[0]!.attributes, l: 'us' } };
        users[1] = { ...users[1]!, attributes: { l: 'ca', costCentre: '12abc', clearance: 'yes', customers: ['initech'] } };
        users[2] = { ...users[2]!, attributes: {} };
      }),
    );
    const run = await ws.apply();
    expect(run.code, run.stderr).toBe(0);
    expect(run.out.plan.attributes?.rejected).toEqual([
      { externalId: 'u-2', userName: BEN, attribute: 'costCentre', reason: 'number: "12abc" is not a number' },
      { externalId: 'u-2', userName: BEN, attribute: 'clearance', reason: 'boolean: "yes" is not a boolean (expected true or false)' },
    ]);
    expect(valuesOf(sim, BEN)).toEqual({ region: 'CA', department: 'Marketing', costCentre: 12, clearance: false, customers: ['initech'] });
    const again = await ws.plan();
    expect(again.out.summary.changes).toBe(0);
    expect(again.out.attributes?.rejected).toHaveLength(2); // still reported on every run until the source is fixed
  });

  it('unmanaged users are never read or written, even when the source lists them', async () => {
    // A hand-made account for a person in the source (not adopted) and one nobody's source knows.
    const dana = sim.store.createUser({ userName: DANA, externalId: 'u-4' });
    const stranger = sim.store.createUser({ userName: 'stranger@example.com' });
    sim.attributes.setValueByName(dana.id, 'region', 'APAC');
    sim.attributes.setValueByName(stranger.id, 'region', 'APAC');
    ws.writeDirectory(
      directory((users) => {
        users[0] = { ...users[0]!, displayName: 'Ana Moved', attributes: { ...users[0]!.attributes, l: 'us' } };
        users[1] = { ...users[1]!, attributes: { l: 'ca', costCentre: 12, clearance: false, customers: ['initech'] } };
        users[2] = { ...users[2]!, attributes: {} };
        users.push(staff(4, { l: 'eu', department: 'Legal' }));
      }),
    );
    sim.clearRequests();
    const { plan, result } = await ws.applyInProcess();
    expect(result.failed).toEqual([]);
    expect(plan.skipped).toContainEqual(expect.objectContaining({ kind: 'user', ref: DANA }));
    expect(plan.attributes?.users.map((u) => u.userName)).toEqual([]);
    const touched = sim.requests.filter(
      (r) => r.path.includes(dana.id) || r.path.includes(stranger.id) || JSON.stringify(r.body ?? '').includes(dana.id),
    );
    expect(touched).toEqual([]);
    expect(sim.attributes.valuesOf(dana.id)).toEqual({ region: 'APAC' });
    expect(sim.attributes.valuesOf(stranger.id)).toEqual({ region: 'APAC' });
  });
});
