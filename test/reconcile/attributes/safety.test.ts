/**
 * The safety rules of user-attribute sync, each against the simulator over sockets: a
 * definition of the wrong type is reported and never changed; definitions the tool did not
 * create are never modified; the guard holds a mass clear; one user's failed write never stops
 * another's; drift is found on the re-read interval; a separate platform API token.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Simulator } from '../../../src/simulator/index.ts';
import { createWorkspace, merge, startSim, type Directory } from '../../helpers/reconcile-harness.ts';
import { ATTRS_PATH, VALUES_PATH, attributeConfig, attributeWrites, staff, userId, valueReads, valuesOf } from './support.ts';

let sim: Simulator | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

const two = (): Directory => ({
  users: [staff(1, { l: 'eu', department: 'Finance' }), staff(2, { l: 'us', department: 'Sales' })],
  groups: [],
});

describe('definitions', () => {
  it('wrong-type definition: reported in the plan, its values not synced, the definition never changed; the rest is synced (exit 1)', async () => {
    sim = await startSim();
    const region = sim.attributes.createDefinition({ name: 'region', type: 'number', description: 'hand-made' });
    const ws = createWorkspace(sim, { directory: two(), config: attributeConfig() });
    const run = await ws.apply();
    expect(run.code).toBe(1);
    const errors = run.out.plan.attributes?.errors ?? [];
    expect(errors).toHaveLength(1);
    expect(errors[0]?.attribute).toBe('region');
    expect(errors[0]?.reason).toContain(`the platform's definition region (id ${region.id}) has type number, the config says string`);
    expect(run.out.result.failed).toEqual([]);
    expect(sim.attributes.definitionByName('region')).toEqual(region);
    expect(
      attributeWrites(sim)
        .filter((w) => w.path.startsWith(ATTRS_PATH))
        .map((w) => (w.body as { name: string }).name)
        .sort(),
    ).toEqual(['clearance', 'costCentre', 'customers', 'department']);
    expect(valuesOf(sim, 'user1@example.com')).toEqual({ department: 'Finance' });
    const text = await ws.cli(['plan', '--config', ws.configPath]);
    expect(text.stdout).toContain('User attribute errors (1)');
    expect(text.stdout).toContain('has type number, the config says string');
  });

  it('definitions the tool did not create are never modified; its own are updated when the config changes', async () => {
    sim = await startSim();
    const hr = sim.attributes.createDefinition({ name: 'department', type: 'string', description: 'HR owned' });
    const described = (region: string, department: string) =>
      merge(attributeConfig(), {
        provisioning: {
          userAttributes: [
            { name: 'region', type: 'string', from: 'attributes.l', description: region },
            { name: 'department', type: 'string', from: 'attributes.department', description: department },
          ],
        },
      });
    const ws = createWorkspace(sim, { directory: two(), config: described('Region', 'Department') });
    expect((await ws.applyInProcess()).result.failed).toEqual([]);
    expect(sim.attributes.definitionByName('department')).toEqual(hr);
    expect(sim.attributes.definitionByName('region')?.description).toBe('Region');
    // The hand-made definition's values are synced all the same (read first: it may hold values).
    expect(valuesOf(sim, 'user2@example.com')).toEqual({ region: 'us', department: 'Sales' });

    ws.writeConfig(described('Data region', 'Department of record'));
    sim.clearRequests();
    const { plan, result } = await ws.applyInProcess();
    expect(result.failed).toEqual([]);
    expect(plan.attributes?.definitions.update).toEqual([
      { id: sim.attributes.definitionByName('region')?.id, name: 'region', type: 'string', before: 'Region', after: 'Data region' },
    ]);
    expect(attributeWrites(sim).map((w) => `${w.method} ${w.path}`)).toEqual([
      `PUT ${ATTRS_PATH}/${sim.attributes.definitionByName('region')?.id}`,
    ]);
    expect(sim.attributes.definitionByName('region')?.description).toBe('Data region');
    expect(sim.attributes.definitionByName('department')).toEqual(hr);
  });

  it('a definition deleted on the platform is created again and its values rewritten without reading anyone', async () => {
    sim = await startSim();
    const ws = createWorkspace(sim, { directory: two(), config: attributeConfig() });
    await ws.applyInProcess();
    const old = sim.attributes.definitionByName('region')!;
    sim.attributes.deleteDefinition(old.id);
    sim.clearRequests();
    const { plan, result } = await ws.applyInProcess();
    expect(result.failed).toEqual([]);
    expect(plan.attributes?.definitions.create.map((d) => d.name)).toEqual(['region']);
    expect(valueReads(sim)).toBe(0);
    expect(valuesOf(sim, 'user1@example.com')).toMatchObject({ region: 'EU' });
    expect(sim.attributes.definitionByName('region')?.id).not.toBe(old.id);
    expect((await ws.planInProcess()).summary.changes).toBe(0);
  });
  it('a hand-made definition replaced on the platform (same name, new id): the ledger copy is stale, users are read again and the values rewritten', async () => {
    sim = await startSim();
    const handMade = sim.attributes.createDefinition({ name: 'region', type: 'string' });
    const ws = createWorkspace(sim, { directory: two(), config: attributeConfig() });
    expect((await ws.applyInProcess()).result.failed).toEqual([]);
    expect(ws.readLedger()?.attributes?.definitions['region']).toEqual({ id: handMade.id, created: false });
    sim.attributes.deleteDefinition(handMade.id);
    const again = sim.attributes.createDefinition({ name: 'region', type: 'string' });
    sim.clearRequests();
    const { plan, result } = await ws.applyInProcess();
    expect(result.failed).toEqual([]);
    expect(plan.attributes?.definitions.create).toEqual([]);
    expect(plan.attributes?.reads).toEqual({ platform: 2, fromLedger: 0, newUsers: 0 });
    expect(valuesOf(sim, 'user1@example.com')).toEqual({ region: 'EU', department: 'Finance' });
    expect(sim.attributes.definitionByName('region')?.id).toBe(again.id);
    expect((await ws.planInProcess()).summary.changes).toBe(0);
  });
});

describe('guard', () => {
  it('holds a mass clear (exit 3, values intact, additions still applied); --allow-deletes lets it through', async () => {
    sim = await startSim();
    const users = [1, 2, 3, 4].map((n) => staff(n, { l: 'eu' }));
    const ws = createWorkspace(sim, { directory: { users, groups: [] }, config: attributeConfig({}, { maxAttributeClears: 2 }) });
    expect((await ws.applyInProcess()).result.failed).toEqual([]);
    // The source loses `l` for everyone (a broken attribute mapping), while one user gains a department.
    ws.writeDirectory({ users: [1, 2, 3, 4].map((n) => staff(n, n === 4 ? { department: 'Legal' } : {})), groups: [] });
    const held = await ws.apply();
    expect(held.code).toBe(3);
    expect(held.out.plan.guard.tripped).toBe(true);
    expect(held.out.plan.guard.reasons).toContain('4 user attribute values taken away exceed guards.maxAttributeClears (2)');
    expect(held.out.plan.guard.attributes).toEqual({
      attributeClears: 4,
      attributeClearUsers: 4,
      attributeUsers: 4,
      maxAttributeClears: 2,
      maxAttributeClearPercent: 100,
    });
    for (const n of [1, 2, 3]) expect(valuesOf(sim, `user${n}@example.com`)).toEqual({ region: 'EU' });
    expect(valuesOf(sim, 'user4@example.com')).toEqual({ region: 'EU', department: 'Legal' });
    expect(held.stderr).toContain('4 user attribute values taken away exceed guards.maxAttributeClears (2)');
    expect(held.out.result.held.attributeTakeAways).toBe(4);
    const text = await ws.cli(['apply', '--config', ws.configPath]);
    expect(text.code).toBe(3);
    expect(text.stdout).toContain('held by the deletion guard: 4 user attribute values taken away (clears, access-relevant changes)');

    const allowed = await ws.apply(['--allow-deletes']);
    expect(allowed.code, allowed.stderr).toBe(0);
    for (const n of [1, 2, 3]) expect(valuesOf(sim, `user${n}@example.com`)).toEqual({});
    expect(valuesOf(sim, 'user4@example.com')).toEqual({ department: 'Legal' });
    expect((await ws.planInProcess()).summary.changes).toBe(0);
  });
});

describe('failures', () => {
  it('one user whose values cannot be written is reported; the others are written; the next run converges', async () => {
    sim = await startSim();
    const ws = createWorkspace(sim, { directory: two(), config: attributeConfig() });
    await ws.applyInProcess();
    ws.writeDirectory({ users: [staff(1, { l: 'de', department: 'Finance' }), staff(2, { l: 'fr', department: 'Sales' })], groups: [] });
    sim.setFaults([{ method: 'POST', pathPrefix: VALUES_PATH, kind: 'status', status: 400, times: 1 }]);
    const { result } = await ws.applyInProcess({ concurrency: 1 });
    sim.setFaults([]);
    expect(result.failed).toHaveLength(1);
    const failed = result.failed[0]!;
    expect(failed).toMatchObject({ action: 'user.attributes', code: 'E_REJECTED' });
    expect(failed.message).toMatch(
      /^attributes of user user[12]@example\.com not written: region \(.*rejected \(HTTP 400\): Injected failure \(HTTP 400\)\)$/,
    );
    const other = failed.ref === 'user1@example.com' ? 'user2@example.com' : 'user1@example.com';
    expect(valuesOf(sim, other).region).toBe(other === 'user1@example.com' ? 'DE' : 'FR');
    expect(valuesOf(sim, failed.ref).region).toBe(failed.ref === 'user1@example.com' ? 'EU' : 'US');

    const again = await ws.applyInProcess();
    expect(again.plan.attributes?.users.map((u) => u.userName)).toEqual([failed.ref]);
    expect(again.result.failed).toEqual([]);
    expect(valuesOf(sim, 'user1@example.com').region).toBe('DE');
    expect(valuesOf(sim, 'user2@example.com').region).toBe('FR');
  });

  it('a user whose account was not created gets no attributes and is reported', async () => {
    sim = await startSim();
    const ws = createWorkspace(sim, { directory: two(), config: attributeConfig() });
    sim.setFaults([{ method: 'POST', pathPrefix: '/api/scim/v2/Users', kind: 'status', status: 400, times: 1 }]);
    const { result } = await ws.applyInProcess({ concurrency: 1 });
    sim.setFaults([]);
    const failedActions = result.failed.map((f) => f.action).sort();
    expect(failedActions).toEqual(['user.attributes', 'user.create']);
    expect(result.failed.find((f) => f.action === 'user.attributes')?.message).toMatch(
      /user user[12]@example\.com was not created, so its attributes were not written/,
    );
    expect(sim.store.users()).toHaveLength(1);
  });
});

describe('drift and re-reads', () => {
  it("values changed behind the tool's back are found on the re-read interval (0 = every run) and corrected", async () => {
    sim = await startSim();
    const ws = createWorkspace(sim, { directory: two(), config: attributeConfig() });
    await ws.applyInProcess();
    sim.attributes.setValueByName(userId(sim, 'user1@example.com'), 'region', 'XX');

    sim.clearRequests();
    const trusting = await ws.planInProcess();
    expect(trusting.attributes?.users).toEqual([]); // the ledger copy is fresh: no read, drift unseen
    expect(valueReads(sim)).toBe(0);

    ws.writeConfig(merge(attributeConfig(), { provisioning: { userAttributeSync: { rereadAfterHours: 0 } } }));
    sim.clearRequests();
    const { plan } = await ws.applyInProcess();
    expect(valueReads(sim)).toBe(2);
    expect(plan.attributes?.reads).toEqual({ platform: 2, fromLedger: 0, newUsers: 0 });
    expect(plan.attributes?.users.map((u) => [u.userName, u.changes])).toEqual([
      ['user1@example.com', [{ attribute: 'region', before: 'XX', after: 'EU', takesAway: true }]],
    ]);
    expect(valuesOf(sim, 'user1@example.com').region).toBe('EU');
  });

  it('a ledger written before attributes existed (or lost) means one read per user, then none', async () => {
    sim = await startSim();
    const ws = createWorkspace(sim, { directory: two(), config: {} });
    await ws.applyInProcess();
    expect(ws.readLedger()?.attributes).toBeUndefined();
    ws.writeConfig(attributeConfig());
    // Someone created the definition and set the values by hand already: nothing to write.
    const def = sim.attributes.createDefinition({ name: 'region', type: 'string' });
    sim.attributes.setValue(userId(sim, 'user1@example.com'), def.id, 'EU');
    sim.attributes.setValue(userId(sim, 'user2@example.com'), def.id, 'US');
    sim.clearRequests();
    const first = await ws.applyInProcess();
    expect(first.plan.attributes?.reads).toEqual({ platform: 2, fromLedger: 0, newUsers: 0 });
    expect(first.plan.attributes?.users.flatMap((u) => u.changes.map((c) => c.attribute))).toEqual(['department', 'department']);
    expect(
      attributeWrites(sim)
        .filter((w) => w.path.startsWith(VALUES_PATH))
        .map((w) => (w.body as { attributeId: string }).attributeId),
    ).not.toContain(def.id);
    sim.clearRequests();
    const second = await ws.applyInProcess();
    expect(second.plan.summary.changes).toBe(0);
    expect(valueReads(sim)).toBe(0);
  });
});

describe('platform API token', () => {
  it('the SCIM token may not reach the platform API: users are still provisioned, attributes report the 403; apiToken fixes it', async () => {
    sim = await startSim({ tokens: [{ token: 'scim-secret-1', kind: 'scim' }, { token: 'api-secret-2' }] });
    const base = merge(attributeConfig(), { platform: { token: 'scim-secret-1' } });
    const ws = createWorkspace(sim, { directory: two(), config: base });
    const refused = await ws.apply();
    expect(refused.code).toBe(1);
    expect(sim.store.users()).toHaveLength(2);
    expect(refused.out.plan.attributes?.errors).toEqual([
      {
        attribute: null,
        reason: expect.stringContaining('user attributes are not synced this run [E_AUTH_FORBIDDEN]') as unknown as string,
      },
    ]);
    expect(refused.out.plan.attributes?.errors[0]?.reason).toContain('check platform.apiToken / platform.apiTokenFile');
    expect(refused.stdout + refused.stderr).not.toContain('scim-secret-1');

    ws.writeConfig(merge(base, { platform: { apiToken: '${API_TOKEN}' } }));
    const ok = await ws.apply([], { env: { API_TOKEN: 'api-secret-2' } });
    expect(ok.code, ok.stderr).toBe(0);
    expect(valuesOf(sim, 'user1@example.com')).toEqual({ region: 'EU', department: 'Finance' });
    expect(ok.stdout + ok.stderr).not.toContain('api-secret-2');
  });
});

describe('lifecycle events', () => {
  it("adoption: an existing account's values are read and only the differences are written", async () => {
    sim = await startSim();
    const region = sim.attributes.createDefinition({ name: 'region', type: 'string' });
    const dept = sim.attributes.createDefinition({ name: 'department', type: 'string' });
    const existing = sim.store.createUser({
      userName: 'user1@example.com',
      externalId: 'u-1',
      name: { givenName: 'Given1', familyName: 'Family1' },
    });
    sim.attributes.setValue(existing.id, region.id, 'EU');
    sim.attributes.setValue(existing.id, dept.id, 'Old');
    const ws = createWorkspace(sim, {
      directory: { users: [staff(1, { l: 'eu', department: 'Finance' })], groups: [] },
      config: merge(attributeConfig(), { provisioning: { matching: { adoptExisting: true } } }),
    });
    const { plan, result } = await ws.applyInProcess();
    expect(result.failed).toEqual([]);
    expect(plan.users.update).toEqual([expect.objectContaining({ id: existing.id, adopt: true })]);
    expect(plan.attributes?.reads).toEqual({ platform: 1, fromLedger: 0, newUsers: 0 });
    expect(plan.attributes?.users).toEqual([
      {
        id: existing.id,
        externalId: 'u-1',
        userName: 'user1@example.com',
        changes: [{ attribute: 'department', before: 'Old', after: 'Finance', takesAway: true }],
      },
    ]);
    expect(sim.attributes.valuesOf(existing.id)).toEqual({ region: 'EU', department: 'Finance' });
    expect(ws.readLedger()?.users[existing.id]?.externalId).toBe('u-1');
  });

  it('leaver and returner: a deactivated user keeps its values untouched; on return it is reactivated and gets the current values in the same run', async () => {
    sim = await startSim();
    const ws = createWorkspace(sim, { directory: two(), config: attributeConfig() });
    await ws.applyInProcess();
    const ben = userId(sim, 'user2@example.com');
    ws.writeDirectory({
      users: [staff(1, { l: 'eu', department: 'Finance' }), staff(2, { department: 'Sales' }, { active: false })],
      groups: [],
    });
    const leave = await ws.applyInProcess();
    expect(leave.plan.users.deactivate.map((u) => u.id)).toEqual([ben]);
    expect(leave.plan.attributes?.users).toEqual([]); // no clear for a leaver: deactivation already removes access
    expect(sim.store.getUser(ben)?.active).toBe(false);
    expect(sim.attributes.valuesOf(ben)).toEqual({ region: 'US', department: 'Sales' });

    ws.writeDirectory({ users: [staff(1, { l: 'eu', department: 'Finance' }), staff(2, { l: 'de', department: 'Sales' })], groups: [] });
    const back = await ws.applyInProcess();
    expect(back.result.failed).toEqual([]);
    expect(back.plan.users.reactivate.map((u) => u.id)).toEqual([ben]);
    expect(back.plan.attributes?.users.map((u) => [u.userName, u.changes])).toEqual([
      ['user2@example.com', [{ attribute: 'region', before: 'US', after: 'DE', takesAway: true }]],
    ]);
    expect(sim.store.getUser(ben)?.active).toBe(true);
    expect(sim.attributes.valuesOf(ben)).toEqual({ region: 'DE', department: 'Sales' });
    expect((await ws.planInProcess()).summary.changes).toBe(0);
  });
});

describe('on demand and reviewed plans', () => {
  it("--only writes the selected user's values and nobody else's", async () => {
    sim = await startSim();
    const ws = createWorkspace(sim, { directory: two(), config: attributeConfig() });
    await ws.applyInProcess();
    ws.writeDirectory({ users: [staff(1, { l: 'de', department: 'Finance' }), staff(2, { l: 'fr', department: 'Sales' })], groups: [] });
    const run = await ws.apply(['--only', 'user2@example.com']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.out.plan.attributes?.users.map((u) => u.userName)).toEqual(['user2@example.com']);
    expect(valuesOf(sim, 'user2@example.com').region).toBe('FR');
    expect(valuesOf(sim, 'user1@example.com').region).toBe('EU');
  });

  it('apply --plan refuses a reviewed plan whose attribute values changed since', async () => {
    sim = await startSim();
    const ws = createWorkspace(sim, { directory: two(), config: attributeConfig() });
    await ws.applyInProcess();
    ws.writeDirectory({ users: [staff(1, { l: 'de', department: 'Finance' }), staff(2, { l: 'us', department: 'Sales' })], groups: [] });
    const saved = await ws.cli(['plan', '--config', ws.configPath, '--out', 'reviewed.json']);
    expect(saved.code, saved.stderr).toBe(0);
    ws.writeDirectory({ users: [staff(1, { l: 'at', department: 'Finance' }), staff(2, { l: 'us', department: 'Sales' })], groups: [] });
    const refused = await ws.cli(['apply', '--config', ws.configPath, '--plan', 'reviewed.json']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('changed since the plan: set region of user1@example.com');
    expect(valuesOf(sim, 'user1@example.com').region).toBe('EU');
  });
});
