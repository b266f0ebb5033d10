/**
 * Every simulator quirk, end to end: a source with awkward names (quotes, backslashes, mixed
 * case), several e-mails per person and groups is planned and applied against a server with
 * that quirk, over sockets. The platform ends up exactly as the source says, and the next
 * plan is empty.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCodes } from '../../src/errors.ts';
import { SERVER_QUIRKS, type ServerQuirk, type Simulator } from '../../src/simulator/index.ts';
import { createWorkspace, memberNames, people, startSim, type ConfigPatch, type Directory } from '../helpers/reconcile-harness.ts';

let sim: Simulator | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

function directory(): Directory {
  const users = people(1, 9);
  users.push(
    {
      externalId: 'u-alice',
      userName: 'Alice@Example.com',
      givenName: 'Alice',
      familyName: 'Ng',
      emails: ['alice@example.com', 'alice.ng@example.org'],
    },
    { externalId: 'u-obrien', userName: 'o"brien@example.com', givenName: 'Pat', familyName: "O'Brien", emails: 'obrien@example.com' },
    // An LDAP-style id with an escaped comma: a backslash in every externalId filter.
    { externalId: 'CN=One\\, Dom', userName: 'dom\\one@example.com', givenName: 'Dom', familyName: 'One' },
  );
  return {
    users,
    groups: [
      { externalId: 'g-eng', displayName: 'Eng', members: ['u-1', 'u-alice', 'u-obrien'] },
      { externalId: 'g-core', displayName: 'Ops "Core"', members: ['CN=One\\, Dom', 'u-2'] },
    ],
  };
}

const EXPECTED_USERS = [
  ...people(1, 9).map((p) => `${p.externalId}=${p.userName}`),
  'u-alice=Alice@Example.com',
  'CN=One\\, Dom=dom\\one@example.com',
  'u-obrien=o"brien@example.com',
].sort();

async function converge(quirks: ServerQuirk[], config: ConfigPatch = {}) {
  sim = await startSim({ quirks, maxPageSize: 5 });
  const ws = createWorkspace(sim, { directory: directory(), config: { platform: { scim: { pageSize: 5 } }, ...config } });
  const { plan, result } = await ws.applyInProcess();
  return { ws, plan, result };
}

describe('reconcile against each server quirk', () => {
  for (const quirk of Object.keys(SERVER_QUIRKS) as ServerQuirk[]) {
    it(`${quirk}: joiners applied exactly, next plan empty`, async () => {
      const config: ConfigPatch = quirk === 'unique-email-types' ? { provisioning: { emails: { typeMode: 'unique' } } } : {};
      const { ws, plan, result } = await converge([quirk], config);
      expect(plan.summary.changes).toBeGreaterThan(0);
      expect(result.failed).toEqual([]);
      const s = sim!;
      expect(
        s.store
          .users()
          .map((u) => `${u.externalId}=${u.userName}`)
          .sort(),
      ).toEqual(EXPECTED_USERS);
      expect(memberNames(s, 'Eng')).toEqual(['Alice@Example.com', 'o"brien@example.com', 'user1@example.com']);
      expect(memberNames(s, 'Ops "Core"')).toEqual(['dom\\one@example.com', 'user2@example.com']);
      const alice = s.store.getUserByUserName('Alice@Example.com');
      expect(alice?.emails?.map((e) => e.value)).toEqual(['alice@example.com', 'alice.ng@example.org']);
      // Every user and group is in the ledger under its real id (also when the 201 had none).
      const ledger = ws.readLedger();
      expect(Object.keys(ledger?.users ?? {}).sort()).toEqual(
        s.store
          .users()
          .map((u) => u.id)
          .sort(),
      );
      const again = await ws.planInProcess();
      expect(again.summary.changes).toBe(0);
    });
  }

  it('all quirks at once', async () => {
    const { ws, result } = await converge(Object.keys(SERVER_QUIRKS) as ServerQuirk[], {
      provisioning: { emails: { typeMode: 'unique' } },
    });
    expect(result.failed).toEqual([]);
    expect(
      sim!.store
        .users()
        .map((u) => `${u.externalId}=${u.userName}`)
        .sort(),
    ).toEqual(EXPECTED_USERS);
    // The 201s held no id; the escaped externalId and name were refused by the filter (400), found by listing.
    expect(sim!.requests.some((r) => r.status === 400 && r.query['filter']?.includes('\\'))).toBe(true);
    expect((await ws.planInProcess()).summary.changes).toBe(0);
  });

  it('unique-email-types with the default type mode: the person with two addresses is refused (so the setting is needed), the others are created', async () => {
    const { result } = await converge(['unique-email-types']);
    const creates = result.failed.filter((f) => f.action === 'user.create');
    expect(creates.map((f) => [f.ref, f.code])).toEqual([['Alice@Example.com', ErrorCodes.REJECTED]]);
    expect(creates[0]?.message).toContain('more than one address');
    // Her membership could not be added either, and says why.
    expect(result.failed.filter((f) => f.action !== 'user.create').map((f) => f.ref)).toEqual(['Eng']);
    expect(sim!.store.users()).toHaveLength(11);
  });
});

describe('objects changing between listing pages', () => {
  it('leaver missed between pages: a leaver whose account shifts into an offset already read is still deactivated', async () => {
    sim = await startSim({ maxPageSize: 5 });
    const users = people(1, 12);
    const ws = createWorkspace(sim, { directory: { users, groups: [] }, config: { platform: { scim: { pageSize: 5 } } } });
    // One at a time, so the platform's order is the source's: user1 … user12.
    expect((await ws.applyInProcess({ concurrency: 1 })).result.failed).toEqual([]);
    const s = sim;
    expect(s.store.users().map((u) => u.userName)).toEqual(users.map((u) => u.userName));
    const leaver = s.store.getUserByUserName('user6@example.com')!;
    // u-6 leaves. While the plan lists users, after page 1 an admin deletes user1 and someone
    // creates another account: totalResults stays 12, and user6 moves back into offset 5, read already.
    ws.writeDirectory({ users: users.filter((u) => u.externalId !== 'u-6'), groups: [] });
    s.setFaults([{ kind: 'mutate-between-pages', mutation: 'churn', times: 1, pathPrefix: '/api/scim/v2/Users' }]);
    const { plan, result } = await ws.applyInProcess();
    expect(s.requests.filter((r) => r.faults?.includes('mutate-between-pages'))).toHaveLength(1);
    expect(result.failed).toEqual([]);
    expect(plan.users.deactivate.map((u) => u.userName)).toEqual(['user6@example.com']);
    expect(s.store.getUser(leaver.id)?.active).toBe(false);
    // user1, deleted by the admin but still in the source, is back; the stranger is left alone.
    expect(plan.users.create.map((u) => u.userName)).toEqual(['user1@example.com']);
    expect(s.store.users().filter((u) => u.userName.startsWith('churn-'))).toHaveLength(1);
    expect((await ws.planInProcess()).summary.changes).toBe(0);
  });
});
