/**
 * An account belongs to one person forever. emp-100 alice@ (Finance-Admins, region EU,
 * clearance secret) leaves; emp-200, a different person, is given alice@ — in a later run or
 * in the same source edit. The account is never handed over implicitly: emp-200 is an identity
 * conflict, listed in the plan, the plan table and the provisioning log. The ways out are
 * explicit: the account's deletion frees the name, `ledger reassign` hands it over on purpose,
 * and `matching.handOverLeaverAccountsByName` opts in to a handover that carries nothing over
 * and is held whole by the guard.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ProvisioningRecord } from '../../../src/provisioning-log/record.ts';
import type { Simulator } from '../../../src/simulator/index.ts';
import { createWorkspace, memberNames, startSim, type ConfigPatch, type DirUser, type Workspace } from '../../helpers/reconcile-harness.ts';
import { apply, byName, expectConverged, user, users } from './support.ts';

const ALICE = 'alice@example.com';
const alice = user('emp-100', ALICE, { attributes: { region: 'eu', clearance: 'secret' } });
const newHire = user('emp-200', ALICE, { givenName: 'Alicia', familyName: 'New', attributes: { region: 'us' } });
const colleagues = ['emp-1', 'emp-2', 'emp-3', 'emp-4'].map((x, i) => user(x, `c${i + 1}@example.com`, { attributes: { region: 'eu' } }));

/** Finance-Admins holds alice (an admin group); Staff holds everyone the directory lists. */
function dir(list: DirUser[], admins: string[] = ['emp-100']) {
  return {
    users: list,
    groups: [
      { externalId: 'g-fin', displayName: 'Finance-Admins', members: admins },
      { externalId: 'g-staff', displayName: 'Staff', members: list.map((u) => u.externalId) },
    ],
  };
}

function config(extra: ConfigPatch = {}): ConfigPatch {
  return {
    provisioning: {
      membership: 'additive',
      userAttributes: [
        { name: 'region', type: 'string', from: 'attributes.region', transform: 'upper' },
        { name: 'clearance', type: 'string', from: 'attributes.clearance', whenMissing: 'keep' },
      ],
      guards: { maxDeletePercent: 100, maxAttributeClearPercent: 100 },
      ...extra,
    },
  };
}

function logRecords(ws: Workspace): ProvisioningRecord[] {
  return readFileSync(join(ws.dir, 'state', 'e2e', 'provisioning-log.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as ProvisioningRecord);
}

/** alice synced, then gone from the source: her account is kept, deactivated, with her values and (additive) her admin group. */
async function aliceLeft(sim: Simulator, extra: ConfigPatch = {}): Promise<{ ws: Workspace; id: string }> {
  const ws = createWorkspace(sim, { directory: dir([alice, ...colleagues]), config: config(extra) });
  await apply(ws);
  const id = byName(sim, ALICE).id;
  ws.writeDirectory(dir(colleagues));
  await apply(ws);
  expect(sim.store.getUser(id)).toMatchObject({ externalId: 'emp-100', active: false });
  expect(sim.attributes.valuesOf(id)).toEqual({ region: 'EU', clearance: 'secret' });
  expect(memberNames(sim, 'Finance-Admins')).toEqual([ALICE]);
  return { ws, id };
}

describe('recycled identity: an account never passes from one person to another', () => {
  let sim: Simulator;
  afterEach(() => sim.close());

  it("a new hire given a leaver's address in a later run: identity conflict, the leaver's account, values and admin group stay hers", async () => {
    sim = await startSim();
    const { ws, id } = await aliceLeft(sim);

    ws.writeDirectory(dir([newHire, ...colleagues], []));
    sim.clearRequests();
    const run = await ws.apply();
    expect(run.code).toBe(0);
    const { plan } = run.out;
    expect(plan.users.reactivate).toEqual([]);
    expect(plan.users.update).toEqual([]);
    expect(plan.users.create).toEqual([]);
    expect(plan.conflicts).toEqual([
      expect.objectContaining({
        kind: 'user',
        wants: 'create',
        name: ALICE,
        externalId: 'emp-200',
        account: { id, userName: ALICE, owner: 'emp-100', active: false },
      }),
    ]);
    expect(plan.conflicts?.[0]?.waysOut).toEqual([
      expect.stringContaining(`delete platform user ${id} by hand`),
      expect.stringContaining('scim-audit-sync ledger reassign --from emp-100 --to emp-200'),
      expect.stringContaining('provisioning.matching.handOverLeaverAccountsByName: true'),
    ]);
    expect(plan.summary.conflicts).toBe(1);
    // Nothing was written to alice's account: identity, values, groups.
    expect(sim.requests.filter((r) => r.method !== 'GET' && (r.path.includes(id) || JSON.stringify(r.body ?? '').includes(id)))).toEqual(
      [],
    );
    expect(sim.store.getUser(id)).toMatchObject({ externalId: 'emp-100', active: false, name: { givenName: 'alice' } });
    expect(sim.attributes.valuesOf(id)).toEqual({ region: 'EU', clearance: 'secret' });
    expect(memberNames(sim, 'Finance-Admins')).toEqual([ALICE]);
    // Reported: the provisioning log and the plan table.
    expect(logRecords(ws).filter((r) => r.action === 'user.conflict')).toEqual([
      expect.objectContaining({
        result: 'held',
        object: { type: 'user', externalId: 'emp-200', name: ALICE, id },
        reason: expect.stringContaining('the account of emp-100, who is not in the source'),
      }),
    ]);
    const table = await ws.cli(['plan', '--config', ws.configPath]);
    expect(table.stdout).toContain("Identity conflicts (not created: the name is held by another person's account) (1)");
    expect(table.stdout).toContain('ledger reassign --from emp-100 --to emp-200');
    // The headline says the newcomer was left out, and a pipeline can fail on it.
    expect(table.stdout).toContain('No changes, but 1 identity conflict held (listed below): the platform matches the rest of the source.');
    expect((await ws.cli(['plan', '--config', ws.configPath, '--fail-on-rejected'])).code).toBe(4);
    await expectConverged(ws);
  });

  it('emp-100 replaced by emp-200 with the same address in one edit: an identity conflict, not a silent update', async () => {
    sim = await startSim();
    const ws = createWorkspace(sim, { directory: dir([alice, ...colleagues]), config: config() });
    await apply(ws);
    const id = byName(sim, ALICE).id;

    ws.writeDirectory(dir([newHire, ...colleagues], ['emp-200']));
    // Provisioning emp-200 on demand shows the conflict too (and nobody else's).
    const only = await ws.plan(['--only', 'emp-200']);
    expect(only.out.conflicts?.map((c) => [c.externalId, c.account.id])).toEqual([['emp-200', id]]);
    expect(only.out.users.create).toEqual([]);
    const run = await apply(ws);
    expect(run.plan.users.update).toEqual([]);
    expect(run.plan.users.create).toEqual([]);
    expect(run.plan.users.deactivate).toEqual([{ id, externalId: 'emp-100', userName: ALICE, reason: 'not-in-source' }]);
    expect(run.plan.conflicts?.map((c) => [c.externalId, c.account.id, c.account.owner])).toEqual([['emp-200', id, 'emp-100']]);
    expect(sim.store.getUser(id)).toMatchObject({ externalId: 'emp-100', active: false, name: { familyName: 'emp-100' } });
    expect(sim.attributes.valuesOf(id)).toEqual({ region: 'EU', clearance: 'secret' });
    expect(users(sim)).toContain(`${ALICE} emp-100 inactive`);
    expect(sim.store.users().filter((u) => u.externalId === 'emp-200')).toEqual([]);
    await expectConverged(ws);
  });

  it("a new hire given the leaver's address in another spelling (decomposed, upper case): still her name, still a conflict", async () => {
    sim = await startSim();
    const jose = user('emp-100', 'josé@example.com');
    const ws = createWorkspace(sim, { directory: dir([jose, ...colleagues]), config: config() });
    await apply(ws);
    const id = byName(sim, 'josé@example.com').id;
    ws.writeDirectory(dir(colleagues));
    await apply(ws);

    for (const spelling of ['jose\u0301@example.com', 'JOSÉ@EXAMPLE.COM', 'JOSE\u0301@example.com']) {
      ws.writeDirectory(dir([user('emp-200', spelling), ...colleagues], []));
      const run = await apply(ws);
      expect(run.plan.users.create).toEqual([]);
      expect(run.plan.users.reactivate).toEqual([]);
      expect(run.plan.conflicts?.map((c) => [c.name, c.account.id, c.account.owner])).toEqual([[spelling.normalize('NFC'), id, 'emp-100']]);
    }
    expect(sim.store.users().filter((u) => u.externalId === 'emp-200')).toEqual([]);
    expect(sim.store.getUser(id)).toMatchObject({ externalId: 'emp-100', active: false });
  });

  it("one edit under deprovision.action delete: the leaver's account is deleted first and the new hire gets a new account with nothing of hers", async () => {
    sim = await startSim();
    const ws = createWorkspace(sim, { directory: dir([alice, ...colleagues]), config: config({ deprovision: { action: 'delete' } }) });
    await apply(ws);
    const id = byName(sim, ALICE).id;

    ws.writeDirectory(dir([newHire, ...colleagues], []));
    const run = await apply(ws);
    expect(run.plan.users.delete).toEqual([expect.objectContaining({ id, externalId: 'emp-100', freesName: true })]);
    expect(run.plan.users.create.map((c) => c.externalId)).toEqual(['emp-200']);
    expect(run.plan.conflicts).toEqual([]);
    expect(sim.store.getUser(id)).toBeUndefined();
    const fresh = byName(sim, ALICE);
    expect(fresh.id).not.toBe(id);
    expect(fresh).toMatchObject({ externalId: 'emp-200', active: true, name: { givenName: 'Alicia' } });
    expect(sim.attributes.valuesOf(fresh.id)).toEqual({ region: 'US' });
    expect(memberNames(sim, 'Finance-Admins')).toEqual([]);
    await expectConverged(ws);
  });

  it('one edit under deprovision.action delete while the guard holds the deletion: a conflict until the deletion is approved, then a new account', async () => {
    sim = await startSim();
    const ws = createWorkspace(sim, {
      directory: dir([alice, ...colleagues]),
      config: config({ deprovision: { action: 'delete' }, guards: { maxDeletes: 0, maxDeletePercent: 100 } }),
    });
    await apply(ws);
    const id = byName(sim, ALICE).id;

    ws.writeDirectory(dir([newHire, ...colleagues], []));
    const held = await apply(ws);
    expect(held.plan.guard.tripped).toBe(true);
    expect(held.plan.users.create).toEqual([]);
    expect(held.plan.conflicts).toEqual([
      expect.objectContaining({ externalId: 'emp-200', reason: expect.stringContaining('its deletion is held by the deletion guard') }),
    ]);
    expect(sim.store.getUser(id)).toMatchObject({ externalId: 'emp-100', active: true });
    expect(sim.attributes.valuesOf(id)).toEqual({ region: 'EU', clearance: 'secret' });

    const approved = await apply(ws, { allowDeletes: true });
    expect(approved.plan.conflicts).toEqual([]);
    expect(sim.store.getUser(id)).toBeUndefined();
    expect(byName(sim, ALICE)).toMatchObject({ externalId: 'emp-200', active: true });
    expect(sim.attributes.valuesOf(byName(sim, ALICE).id)).toEqual({ region: 'US' });
  });

  it('ledger reassign hands the account over on purpose (the same person under a new id): recorded, then reactivated with its values and groups', async () => {
    sim = await startSim();
    const { ws, id } = await aliceLeft(sim);
    ws.writeDirectory(dir([{ ...newHire, givenName: 'alice', familyName: 'emp-100' }, ...colleagues], []));
    expect((await ws.planInProcess()).conflicts).toHaveLength(1);

    // A second account for a person who has one is refused.
    const refused = await ws.cli(['ledger', 'reassign', '--config', ws.configPath, '--from', 'emp-100', '--to', 'emp-1', '--reason', 'x']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('emp-1 already has an account in the ledger');

    const done = await ws.cli([
      'ledger',
      'reassign',
      '--config',
      ws.configPath,
      '--from',
      'emp-100',
      '--to',
      'emp-200',
      '--reason',
      'HR id migration, ticket 4711',
    ]);
    expect(done.stderr).toBe('');
    expect(done.code).toBe(0);
    expect(done.stdout).toContain(`reassigned account ${id} of tenant e2e from emp-100 to emp-200`);
    expect(ws.readLedger()?.users[id]?.externalId).toBe('emp-200');
    expect(logRecords(ws).filter((r) => r.action === 'user.reassign')).toEqual([
      expect.objectContaining({
        result: 'ok',
        object: { type: 'user', externalId: 'emp-200', id },
        changes: [{ path: 'externalId', before: 'emp-100', after: 'emp-200' }],
        reason: expect.stringContaining('HR id migration, ticket 4711'),
      }),
    ]);
    // `log --user emp-100` finds the handover by the former id.
    const log = await ws.cli([
      'log',
      '--config',
      ws.configPath,
      '--user',
      'emp-100',
      '--action',
      'user.reassign',
      '--store',
      'file',
      '--json',
    ]);
    expect(log.code).toBe(0);
    expect(log.stdout).toContain('user.reassign');

    const run = await apply(ws);
    expect(run.plan.conflicts).toEqual([]);
    expect(run.plan.users.reactivate.map((u) => [u.id, u.externalId])).toEqual([[id, 'emp-200']]);
    expect(sim.store.getUser(id)).toMatchObject({ externalId: 'emp-200', active: true });
    // On purpose: the same person keeps what the account has (clearance under whenMissing: keep, the admin group).
    expect(sim.attributes.valuesOf(id)).toEqual({ region: 'US', clearance: 'secret' });
    expect(memberNames(sim, 'Finance-Admins')).toEqual([ALICE]);
    expect(memberNames(sim, 'Staff')).toContain(ALICE);
    await expectConverged(ws);
  });

  it('matching.handOverLeaverAccountsByName: the account is handed over and nothing of the leaver carries over (values, additive groups)', async () => {
    sim = await startSim();
    const { ws, id } = await aliceLeft(sim, { matching: { handOverLeaverAccountsByName: true } });

    ws.writeDirectory(dir([newHire, ...colleagues], []));
    const run = await ws.apply();
    expect(run.code).toBe(0);
    const { plan } = run.out;
    expect(plan.conflicts).toEqual([]);
    expect(plan.users.reactivate.map((u) => [u.id, u.externalId, u.handoverFrom])).toEqual([[id, 'emp-200', 'emp-100']]);
    expect(sim.store.getUser(id)).toMatchObject({ externalId: 'emp-200', active: true, name: { givenName: 'Alicia' } });
    expect(sim.attributes.valuesOf(id)).toEqual({ region: 'US' });
    expect(memberNames(sim, 'Finance-Admins')).toEqual([]);
    expect(memberNames(sim, 'Staff')).toContain(ALICE);
    expect(
      logRecords(ws)
        .filter((r) => r.action === 'user.reactivate' && r.object.id === id)
        .at(-1)?.changes,
    ).toContainEqual({
      path: 'externalId',
      before: 'emp-100',
      after: 'emp-200',
    });
    await expectConverged(ws);
  });

  it('while the guard holds part of a handover (the clearance it takes away), none of it runs: no reactivation, no new id, no group change', async () => {
    sim = await startSim();
    const { ws, id } = await aliceLeft(sim, {
      matching: { handOverLeaverAccountsByName: true },
      guards: { maxAttributeClears: 0, maxDeletePercent: 100, maxAttributeClearPercent: 100 },
    });

    ws.writeDirectory(dir([newHire, ...colleagues], []));
    sim.clearRequests();
    const run = await ws.apply();
    expect(run.code).toBe(3);
    expect(run.out.plan.guard.tripped).toBe(true);
    expect(run.out.plan.users.reactivate.map((u) => u.handoverFrom)).toEqual(['emp-100']);
    expect(sim.requests.filter((r) => r.method !== 'GET' && (r.path.includes(id) || JSON.stringify(r.body ?? '').includes(id)))).toEqual(
      [],
    );
    expect(sim.store.getUser(id)).toMatchObject({ externalId: 'emp-100', active: false });
    expect(sim.attributes.valuesOf(id)).toEqual({ region: 'EU', clearance: 'secret' });
    expect(memberNames(sim, 'Finance-Admins')).toEqual([ALICE]);
    expect(logRecords(ws).filter((r) => r.result === 'held' && r.action === 'user.reactivate')).toEqual([
      expect.objectContaining({
        object: expect.objectContaining({ id, externalId: 'emp-200' }),
        reason: expect.stringContaining('held whole'),
      }),
    ]);

    const approved = await ws.apply(['--allow-deletes']);
    expect(approved.code).toBe(0);
    expect(sim.store.getUser(id)).toMatchObject({ externalId: 'emp-200', active: true });
    expect(sim.attributes.valuesOf(id)).toEqual({ region: 'US' });
    expect(memberNames(sim, 'Finance-Admins')).toEqual([]);
    await expectConverged(ws);
  });
});
