/**
 * The provisioning log of the one-shot `apply`, read back with `scim-audit-sync log`: every
 * change the engine made, failed to make or held is one record with its before → after
 * values and members, in JSON lines under the state directory; never the credential.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileProvisioningLogStore } from '../../src/provisioning-log/file-store.ts';
import { parseSince } from '../../src/provisioning-log/query.ts';
import type { ProvisioningRecord } from '../../src/provisioning-log/record.ts';
import type { Simulator } from '../../src/simulator/index.ts';
import { createWorkspace, people, person, SIM_TOKEN, SCIM, startSim, type Workspace } from '../helpers/reconcile-harness.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(): Promise<{ sim: Simulator; ws: Workspace }> {
  const sim = await startSim();
  cleanups.push(() => sim.close());
  const ws = createWorkspace(sim, {
    directory: { users: people(1, 4), groups: [{ externalId: 'g-eng', displayName: 'Engineering', members: ['u-1', 'u-2', 'u-3'] }] },
    config: { provisioning: { guards: { maxDeletes: 1, maxDeletePercent: 100 } } },
  });
  return { sim, ws };
}

function logFile(ws: Workspace): ProvisioningRecord[] {
  return readFileSync(join(ws.dir, 'state', 'e2e', 'provisioning-log.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as ProvisioningRecord);
}

async function logJson(ws: Workspace, args: string[]): Promise<ProvisioningRecord[]> {
  const run = await ws.cli(['log', '--config', ws.configPath, '--json', ...args]);
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as ProvisioningRecord[];
}

describe('provisioning log of one-shot apply', () => {
  it('joiners, a mover, a failed rename and a leaver held by the guard: one record each, found by person', async () => {
    const { sim, ws } = await setup();

    // Joiners: four users and a group with three members.
    expect((await ws.apply()).code).toBe(0);
    const first = logFile(ws);
    const creates = first.filter((r) => r.action === 'user.create');
    expect(creates.map((r) => r.object.name).sort()).toEqual([
      'user1@example.com',
      'user2@example.com',
      'user3@example.com',
      'user4@example.com',
    ]);
    for (const r of creates) {
      expect(r).toMatchObject({ tenant: 'e2e', result: 'ok', object: { type: 'user' } });
      expect(r.object.id).toBe(sim.store.users().find((u) => u.userName === r.object.name)?.id);
      expect(r.changes).toContainEqual({ path: 'userName', before: null, after: r.object.name });
    }
    expect(first.find((r) => r.action === 'group.create')).toMatchObject({
      result: 'ok',
      object: { type: 'group', externalId: 'g-eng', name: 'Engineering' },
    });
    expect(first.find((r) => r.action === 'group.members')).toMatchObject({ result: 'ok', members: { addedCount: 3, removedCount: 0 } });
    expect(first.find((r) => r.action === 'group.members')?.members?.added.sort()).toEqual([
      'user1@example.com',
      'user2@example.com',
      'user3@example.com',
    ]);
    expect(new Set(first.map((r) => r.runId)).size).toBe(1);

    // A mover (user1 renamed), a rename the platform refuses (user2), and two leavers
    // (user3, user4) — more than guards.maxDeletes, so their deactivation is held.
    const id2 = sim.store.users().find((u) => u.userName === 'user2@example.com')!.id;
    sim.setFaults([{ kind: 'status', status: 400, method: 'PATCH', pathPrefix: `${SCIM}/Users/${id2}` }]);
    ws.writeDirectory({
      users: [person(1, { familyName: 'Moved' }), person(2, { familyName: 'Refused' })],
      groups: [{ externalId: 'g-eng', displayName: 'Engineering', members: ['u-1', 'u-2'] }],
    });
    const second = await ws.apply();
    expect(second.code).toBe(3); // the guard tripped (it outranks the failed update)
    const records = logFile(ws).slice(first.length);
    const byName = (n: string, action: string): ProvisioningRecord | undefined =>
      records.find((r) => r.object.name === n && r.action === action);
    expect(byName('user1@example.com', 'user.update')).toMatchObject({ result: 'ok' });
    expect(byName('user1@example.com', 'user.update')?.changes).toContainEqual({
      path: 'name.familyName',
      before: 'Family1',
      after: 'Moved',
    });
    const refused = byName('user2@example.com', 'user.update');
    expect(refused).toMatchObject({ result: 'failed' });
    expect(refused?.changes).toContainEqual({ path: 'name.familyName', before: 'Family2', after: 'Refused' });
    expect(refused?.error?.code).toMatch(/^E_/);
    expect(refused?.error?.message).toContain('400');
    for (const n of [3, 4]) {
      const held = byName(`user${n}@example.com`, 'user.deactivate');
      expect(held).toMatchObject({ result: 'held', changes: [{ path: 'active', before: true, after: false }] });
      expect(held?.reason).toMatch(/^not-in-source; held by the deletion guard: .*maxDeletes \(1\)/);
    }
    // The member removal of user3 is destructive too: held with the same reason.
    expect(records.find((r) => r.action === 'group.members')).toMatchObject({
      result: 'held',
      members: { removed: ['user3@example.com'], removedCount: 1 },
    });
    expect(sim.store.users().filter((u) => u.active === false)).toEqual([]);

    // `log --user` answers "what happened to this person?", newest first, memberships included.
    const user3 = await logJson(ws, ['--user', 'USER3@example']);
    expect(user3.map((r) => `${r.action}:${r.result}`)).toEqual([
      'group.members:held',
      'user.deactivate:held',
      'group.members:ok',
      'user.create:ok',
    ]);
    expect((await logJson(ws, ['--result', 'failed'])).map((r) => r.object.name)).toEqual(['user2@example.com']);
    // The other filters, on the same store in this process (no Node start-up per query).
    const store = new FileProvisioningLogStore(join(ws.dir, 'state'), 'e2e', { maxEntries: 1000, maxAgeMs: 86_400_000 });
    expect((await store.query({ action: 'user.update', limit: 100 })).map((r) => `${r.object.name}:${r.result}`).sort()).toEqual([
      'user1@example.com:ok',
      'user2@example.com:failed',
    ]);
    expect((await store.query({ action: 'group', limit: 100 })).map((r) => r.action).sort()).toEqual([
      'group.create',
      'group.members',
      'group.members',
    ]);
    expect(await store.query({ sinceMs: parseSince('2099-01-01'), limit: 100 })).toEqual([]);
    expect((await store.query({ sinceMs: parseSince('1h'), limit: 100 })).length).toBe(logFile(ws).length);
    expect((await store.query({ limit: 2 })).map((r) => r.id)).toEqual(
      logFile(ws)
        .slice(-2)
        .reverse()
        .map((r) => r.id),
    );

    // The human format names the record, its change and its error.
    const text = await ws.cli(['log', '--config', ws.configPath, '--user', 'user2@example.com']);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/failed\s+user\.update\s+user user2@example\.com \(externalId u-2, id [^)]+\)/);
    expect(text.stdout).toContain('name.familyName: Family2 → Refused');
    expect(text.stdout).toMatch(/failed \[E_[A-Z_]+\]/);

    // Approving (--allow-deletes) runs the held deactivations: now ok records.
    sim.setFaults([]);
    expect((await ws.apply(['--allow-deletes'])).code).toBe(0);
    const leaver = await store.query({ user: 'user4@example.com', limit: 1 });
    expect(leaver[0]).toMatchObject({ action: 'user.deactivate', result: 'ok', reason: 'not-in-source' });

    const raw = readFileSync(join(ws.dir, 'state', 'e2e', 'provisioning-log.jsonl'), 'utf8');
    expect(raw).not.toContain(SIM_TOKEN);
  });

  it('adoption, a refused create, a rehire, a renamed and a retired group, and a deletion: every action has its record', async () => {
    const sim = await startSim();
    cleanups.push(() => sim.close());
    // An account someone created by hand before the sync: adopted (matching.adoptExisting).
    sim.store.createUser({ userName: 'user5@example.com', active: true, name: { givenName: 'Given5', familyName: 'Family5' } });
    sim.setFaults([{ kind: 'status', status: 400, method: 'POST', pathPrefix: `${SCIM}/Users`, times: 1 }]);
    const ws = createWorkspace(sim, {
      directory: {
        users: people(1, 5),
        groups: [
          { externalId: 'g-a', displayName: 'Alpha', members: ['u-1'] },
          { externalId: 'g-b', displayName: 'Beta', members: [] },
        ],
      },
      config: { provisioning: { matching: { adoptExisting: true }, apply: { concurrency: 1 }, guards: { maxDeletePercent: 100 } } },
    });
    expect((await ws.apply()).code).toBe(1);
    const first = logFile(ws);
    const refused = first.filter((r) => r.action === 'user.create' && r.result === 'failed');
    expect(refused).toHaveLength(1);
    expect(refused[0]?.error?.code).toMatch(/^E_/);
    expect(refused[0]?.object.id).toBeUndefined();
    expect(first.filter((r) => r.action === 'user.create' && r.result === 'ok')).toHaveLength(3);
    expect(first.find((r) => r.object.name === 'user5@example.com')).toMatchObject({ result: 'ok', object: { externalId: 'u-5' } });
    expect(first.find((r) => r.object.name === 'user5@example.com')?.action).toMatch(/^user\.(adopt|update)$/);

    // The refused create succeeds on the next run; user2 leaves, Alpha is renamed, Beta retired.
    ws.writeDirectory({
      users: [person(1), person(3), person(4), person(5)],
      groups: [{ externalId: 'g-a', displayName: 'Alpha Team', members: ['u-1'] }],
    });
    expect((await ws.apply()).code).toBe(0);
    // user2 is rehired, user3 leaves for good with deprovision.action delete.
    ws.writeDirectory({
      users: [person(1), person(2), person(4), person(5)],
      groups: [{ externalId: 'g-a', displayName: 'Alpha Team', members: ['u-1'] }],
    });
    ws.writeConfig({
      provisioning: { matching: { adoptExisting: true }, deprovision: { action: 'delete' }, guards: { maxDeletePercent: 100 } },
    });
    expect((await ws.apply()).code).toBe(0);

    const all = logFile(ws);
    const seen = new Set(all.map((r) => `${r.action}:${r.result}`));
    for (const a of [
      'user.create',
      'user.deactivate',
      'user.reactivate',
      'user.delete',
      'group.create',
      'group.update',
      'group.delete',
      'group.members',
    ])
      expect(seen, a).toContain(`${a}:ok`);
    expect(all.find((r) => r.action === 'group.update')?.changes).toContainEqual({
      path: 'displayName',
      before: 'Alpha',
      after: 'Alpha Team',
    });
    expect(all.find((r) => r.action === 'group.delete')).toMatchObject({ object: { externalId: 'g-b', name: 'Beta' } });
    expect(all.find((r) => r.action === 'user.reactivate')).toMatchObject({ object: { name: 'user2@example.com' } });
    expect(all.find((r) => r.action === 'user.reactivate')?.changes).toContainEqual({ path: 'active', before: false, after: true });
    expect(all.find((r) => r.action === 'user.delete')).toMatchObject({ object: { name: 'user3@example.com' }, reason: 'not-in-source' });
    expect(new Set(all.map((r) => r.runId)).size).toBe(3);
  });

  it('plan writes nothing; bad --since is a usage error', async () => {
    const { ws } = await setup();
    expect((await ws.plan()).code).toBe(0);
    const empty = await ws.cli(['log', '--config', ws.configPath]);
    expect(empty.stdout).toMatch(/^no provisioning-log records match \(file .*provisioning-log\.jsonl\)/);
    const bad = await ws.cli(['log', '--config', ws.configPath, '--since', 'yesterday-ish']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--since');
  });
});
