/**
 * The deletion guard and the CLI's exit codes, through the real CLI: a tripped guard holds
 * every destructive change but applies the rest (exit 3), --allow-deletes releases it, an
 * empty source never deprovisions, the deprovision actions behave as documented, and an
 * invalid config stops before any request (exit 2).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/simulator/index.ts';
import {
  SCIM,
  createWorkspace,
  memberNames,
  people,
  person,
  startSim,
  writeRequests,
  type DirUser,
  type Directory,
} from '../helpers/reconcile-harness.ts';

function dir(users: DirUser[]): Directory {
  return { users, groups: [{ externalId: 'g-all', displayName: 'Everyone', members: users.map((u) => u.externalId) }] };
}

function activeOf(sim: Simulator, n: number): boolean | undefined {
  return sim.store.getUserByUserName(`user${n}@example.com`)?.active;
}

/** Any request that deactivated or deleted something. */
function destructiveRequests(sim: Simulator) {
  return writeRequests(sim).filter(
    (r) =>
      r.method === 'DELETE' ||
      JSON.stringify(r.body ?? null).includes('"active","value":false') ||
      /"path":"members\[/.test(JSON.stringify(r.body ?? null)),
  );
}

describe('deletion guard and exit codes', () => {
  let sim: Simulator;
  afterEach(() => sim.close());

  it('too many removals: exit 3, destructive changes held, creates/updates applied; --allow-deletes releases them', async () => {
    sim = await startSim();
    const ws = createWorkspace(sim, {
      directory: dir(people(1, 40)),
      config: { provisioning: { guards: { maxDeletes: 5, maxDeletePercent: 50 } } },
    });
    await ws.applyInProcess();
    expect(sim.store.counts().users).toBe(40);

    // 8 users leave (> maxDeletes 5); in the same run one joins and one is renamed.
    const remaining = [...people(9, 40), person(41)].map((u) => (u.externalId === 'u-9' ? { ...u, familyName: 'Renamed' } : u));
    ws.writeDirectory(dir(remaining));
    sim.clearRequests();
    const held = await ws.apply();
    expect(held.code, held.stderr).toBe(3);
    expect(held.stderr).toContain('deletion guard tripped [E_GUARD_TRIPPED]');
    expect(held.stderr).toContain('8 deactivations/deletions exceed guards.maxDeletes (5)');
    expect(held.stderr).toContain('--allow-deletes');
    expect(held.out.plan.guard).toMatchObject({ tripped: true, destructive: 8, maxDeletes: 5 });
    expect(held.out.result.held).toEqual({ usersDeactivate: 8, usersDelete: 0, groupsDelete: 0, membersRemove: 8 });
    expect(destructiveRequests(sim)).toEqual([]);
    for (let n = 1; n <= 8; n++) expect(activeOf(sim, n), `user${n}`).toBe(true);
    // The non-destructive part of the same plan did happen.
    expect(held.out.result.succeeded).toMatchObject({ 'user.create': 1, 'user.update': 1, 'group.members': 1 });
    expect(activeOf(sim, 41)).toBe(true);
    expect(sim.store.getUserByUserName('user9@example.com')?.name?.familyName).toBe('Renamed');
    expect(memberNames(sim, 'Everyone')).toHaveLength(41); // user41 added, nobody removed

    const released = await ws.apply(['--allow-deletes']);
    expect(released.code, released.stderr).toBe(0);
    expect(released.out.plan.guard).toMatchObject({ tripped: false, overridden: true });
    expect(released.out.result.succeeded['user.deactivate']).toBe(8);
    for (let n = 1; n <= 8; n++) expect(activeOf(sim, n), `user${n}`).toBe(false);
    expect(activeOf(sim, 9)).toBe(true);
    expect(memberNames(sim, 'Everyone')).toEqual([...people(9, 41)].map((u) => u.userName).sort());
    const ledger = ws.readLedger();
    const deactivated = Object.values(ledger?.users ?? {}).filter((e) => e.deactivatedAt !== undefined);
    expect(deactivated.map((e) => e.externalId).sort()).toEqual(
      people(1, 8)
        .map((u) => u.externalId)
        .sort(),
    );
  });

  it('an empty source while objects are managed: exit 3 and nothing is deprovisioned', async () => {
    sim = await startSim();
    // Limits this loose would allow the removals: only the empty-source rule can trip.
    const ws = createWorkspace(sim, {
      directory: dir(people(1, 5)),
      config: { provisioning: { guards: { maxDeletes: 1000, maxDeletePercent: 100 } } },
    });
    await ws.applyInProcess();
    ws.writeDirectory({ users: [], groups: [] });
    sim.clearRequests();
    const run = await ws.apply();
    expect(run.code, run.stderr).toBe(3);
    expect(run.out.plan.guard.reasons).toEqual(['the source returned no users while 6 objects are managed']);
    expect(run.stderr).toContain('the source returned no users');
    expect(writeRequests(sim)).toEqual([]);
    expect(sim.store.users().every((u) => u.active === true)).toBe(true);
    expect(sim.store.counts()).toEqual({ users: 5, groups: 1 });
  });

  it('deprovision.action delete removes the users that left', async () => {
    sim = await startSim();
    const del = createWorkspace(sim, {
      directory: dir(people(1, 6)),
      config: { provisioning: { deprovision: { action: 'delete' }, guards: { maxDeletePercent: 50 } } },
    });
    await del.applyInProcess();
    del.writeDirectory(dir(people(3, 6)));
    sim.clearRequests();
    const run = await del.apply();
    expect(run.code, run.stderr).toBe(0);
    expect(run.out.plan.users.delete.map((u) => [u.userName, u.reason])).toEqual([
      ['user1@example.com', 'not-in-source'],
      ['user2@example.com', 'not-in-source'],
    ]);
    expect(run.out.plan.users.deactivate).toEqual([]);
    expect(writeRequests(sim).filter((r) => r.method === 'DELETE' && r.path.startsWith(`${SCIM}/Users/`))).toHaveLength(2);
    expect(sim.store.getUserByUserName('user1@example.com')).toBeUndefined();
    expect(sim.store.getUserByUserName('user2@example.com')).toBeUndefined();
    expect(sim.store.counts().users).toBe(4);
    expect(Object.keys(del.readLedger()?.users ?? {})).toHaveLength(4);
  });

  it('deprovision.action none reports nothing to remove and writes nothing', async () => {
    sim = await startSim();
    const none = createWorkspace(sim, { directory: dir(people(1, 6)), config: { provisioning: { deprovision: { action: 'none' } } } });
    await none.applyInProcess();
    none.writeDirectory({ users: people(3, 6), groups: [] });
    sim.clearRequests();
    const run = await none.applyInProcess();
    expect(run.result.failed).toEqual([]);
    expect(run.plan.users.deactivate).toEqual([]);
    expect(run.plan.users.delete).toEqual([]);
    expect(run.plan.groups.delete).toEqual([]);
    expect(writeRequests(sim)).toEqual([]);
    expect(activeOf(sim, 1)).toBe(true);
    expect(activeOf(sim, 2)).toBe(true);
    expect(sim.store.counts().groups).toBe(1);
  });

  it('an invalid config: exit 2 with the key and the fix named, and no request to the platform', async () => {
    sim = await startSim();
    const typoWs = createWorkspace(sim, { directory: dir(people(1, 2)), config: { provisioning: { deprovison: { action: 'delete' } } } });
    const negativeWs = createWorkspace(sim, { directory: dir(people(1, 2)), config: { provisioning: { guards: { maxDeletes: -1 } } } });
    const noTokenWs = createWorkspace(sim, { directory: dir(people(1, 2)) });
    // Independent child processes: run them side by side.
    const [typo, negative, noToken] = await Promise.all([
      typoWs.cli(['apply', '--config', typoWs.configPath, '--json']),
      negativeWs.cli(['plan', '--config', negativeWs.configPath, '--json']),
      noTokenWs.cli(['apply', '--config', noTokenWs.configPath], { env: { SIM_TOKEN: '' } }),
    ]);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain('E_CONFIG_INVALID');
    expect(typo.stderr).toContain('deprovison');
    expect(typo.stdout).toBe('');
    expect(negative.code).toBe(2);
    expect(negative.stderr).toContain('provisioning.guards.maxDeletes');
    expect(noToken.code).toBe(2);
    expect(noToken.stderr).toContain('platform.token: is empty');
    expect(sim.requests).toEqual([]);
  });
});
