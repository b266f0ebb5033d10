/**
 * The Okta source through @okta/okta-sdk-nodejs against the Okta simulator: statuses,
 * profile attributes, Okta/app/rule groups, pacing from the rate-limit headers, retries,
 * all-or-nothing reads, the change reader, and each credential mistake with its fix.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateServiceApp } from '../../src/simulator/okta/index.ts';
import { oktaSourceSchema, type OktaSourceInput } from '../../src/sources/okta/schema.ts';
import { OktaSource } from '../../src/sources/okta/source.ts';
import { SyncError } from '../../src/errors.ts';
import type { SourceChanges, SourceDelta } from '../../src/sources/changes.ts';
import { API_TOKEN, startTestOktaOrg, type TestOktaOrg } from '../helpers/okta-org.ts';

let org: TestOktaOrg;

const source = (input: OktaSourceInput): OktaSource => new OktaSource(oktaSourceSchema.parse(input), { configDir: org.dir });

function delta(r: SourceChanges): SourceDelta {
  if (r.kind !== 'delta') throw new Error(`expected a delta, got a full read (${r.reason}: ${r.detail ?? ''})`);
  return r;
}

async function failure(p: Promise<unknown>): Promise<SyncError> {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(SyncError);
  return e as SyncError;
}

beforeAll(async () => {
  org = await startTestOktaOrg({
    users: 450,
    groups: 20,
    suspendedEvery: 10,
    deprovisionedEvery: 15,
    lockedOutEvery: 20,
    appGroupEvery: 5,
    rules: true,
  });
  org.sim.org.addUser({ login: 'staged@example.com', email: 'staged@example.com', firstName: 'Sta', lastName: 'Ged' }, 'STAGED');
});

afterAll(async () => {
  await org?.close();
});

describe('Okta source', () => {
  it('reads every status, maps it to active/inactive, and keeps the profile for mapping (API token and service app alike)', async () => {
    const viaToken = await source(org.tokenSource()).read();
    const viaApp = await source(org.appSource()).read();
    expect(viaApp.users).toEqual(viaToken.users);
    expect(viaApp.groups).toEqual(viaToken.groups);
    const all = org.sim.org.listUsers();
    expect(viaToken.users).toHaveLength(all.length); // DEPROVISIONED included: a search lists every status
    const byId = new Map(viaToken.users.map((u) => [u.externalId, u]));
    for (const u of all) {
      const n = byId.get(u.id);
      expect(n?.userName).toBe(u.profile.login);
      expect(n?.active, u.status).toBe(['ACTIVE', 'LOCKED_OUT'].includes(u.status));
    }
    const statuses = new Set(all.map((u) => u.status));
    expect(statuses).toEqual(new Set(['ACTIVE', 'SUSPENDED', 'DEPROVISIONED', 'LOCKED_OUT', 'STAGED']));
    const one = viaToken.users.find((u) => u.userName === 'user00003@example.com');
    expect(one).toMatchObject({
      givenName: 'First00003',
      familyName: 'Last00003',
      displayName: 'First00003 Last00003',
      emails: ['user00003@example.com'],
      attributes: { status: 'ACTIVE', profile: { department: 'Support', costCenter: 'CC-3', employeeNumber: 'E00003' } },
    });
    expect(viaToken.rejected).toEqual([]);
  });

  it('reads Okta groups, application groups and group rules’ results; BUILT_IN Everyone only when asked', async () => {
    const r = await source(org.tokenSource()).read();
    const sim = org.sim.org;
    const expected = sim.listGroups().filter((g) => g.type !== 'BUILT_IN');
    expect(r.groups.map((g) => g.displayName).sort()).toEqual(expected.map((g) => g.profile.name).sort());
    for (const g of expected) {
      const got = r.groups.find((x) => x.externalId === g.id);
      expect(got?.members.sort(), g.profile.name).toEqual(
        sim
          .members(g.id)
          .map((u) => u.id)
          .sort(),
      );
    }
    // A rule's group: every department member that is not deprovisioned.
    const eng = r.groups.find((g) => g.displayName === 'Dept Engineering');
    const engineers = sim.listUsers().filter((u) => u.profile['department'] === 'Engineering' && u.status !== 'DEPROVISIONED');
    expect(eng?.members.sort()).toEqual(engineers.map((u) => u.id).sort());
    expect(r.stats?.['appGroups']).toBe(4);
    const apps = await source(org.tokenSource({ groups: { types: ['APP_GROUP'] } })).read();
    expect(apps.groups.map((g) => g.displayName).sort()).toEqual(['Group 14', 'Group 19', 'Group 4', 'Group 9']);
    const everyone = await source(org.tokenSource({ groups: { types: ['BUILT_IN'] } })).read();
    expect(everyone.groups).toHaveLength(1);
    expect(everyone.groups[0]?.members).toHaveLength(sim.listUsers().filter((u) => u.status !== 'DEPROVISIONED').length);
  });

  it('paces from X-Rate-Limit-Remaining/Reset: a read that would draw 429s waits for the window instead', async () => {
    // Three users pages per one-second window; the read needs three pages plus the others.
    org.sim.rateLimiter.limits.users = 2;
    org.sim.rateLimiter.windowSeconds = 1;
    org.sim.rateLimiter.reset();
    org.sim.requests.length = 0;
    try {
      // The SDK's own executor (no pacing, no retries) on the same limits: the third page is a 429.
      const { Client } = await import('@okta/okta-sdk-nodejs');
      const raw = new Client({
        orgUrl: org.sim.url,
        token: API_TOKEN,
        cacheMiddleware: null,
        requestExecutor: new (await import('@okta/okta-sdk-nodejs')).DefaultRequestExecutor({ maxRetries: 0, requestTimeout: 0 }),
      });
      const unpaced = (async () => {
        for await (const _ of await raw.userApi.listUsers({ search: 'status pr', limit: 200 })) void _;
      })();
      await expect(unpaced).rejects.toMatchObject({ status: 429, errorCode: 'E0000047' });
      org.sim.rateLimiter.reset(); // a fresh window for the paced read
      org.sim.requests.length = 0;
      const r = await source(org.tokenSource({ rateLimitReserve: 0, groups: false })).read();
      expect(r.users).toHaveLength(451);
      const pages = org.sim.requests.filter((q) => q.route === 'users');
      expect(pages.map((q) => q.status)).toEqual([200, 200, 200]);
      expect(r.stats?.['paced']).toBeGreaterThanOrEqual(1);
      expect(r.stats?.['retries']).toBe(0);
    } finally {
      org.sim.rateLimiter.limits.users = 600;
      org.sim.rateLimiter.windowSeconds = 60;
      org.sim.rateLimiter.reset();
    }
  });

  it('a 429 anyway, a cut-short page and a dropped connection are retried; the read completes', async () => {
    org.sim.rateLimiter.windowSeconds = 1; // the 429's X-Rate-Limit-Reset is the next second
    org.sim.rateLimiter.reset();
    org.sim.setFaults([
      { kind: 'rate-limit', route: 'users', page: 2, times: 1 },
      { kind: 'truncated', route: 'users', page: 3, times: 1 },
      { kind: 'reset', route: 'group-users', times: 1 },
    ]);
    org.sim.requests.length = 0;
    const r = await source(org.tokenSource()).read();
    org.sim.setFaults([]);
    org.sim.rateLimiter.windowSeconds = 60;
    expect(r.users).toHaveLength(451);
    expect(r.stats?.['retries']).toBe(3);
    expect(org.sim.requests.filter((q) => q.fault !== undefined).map((q) => q.fault)).toEqual(['rate-limit', 'truncated', 'reset']);
  });

  it('a service app token that expires mid-read is renewed and the read completes', async () => {
    org.sim.setFaults([{ kind: 'expire-tokens', route: 'group-users', times: 1 }]);
    org.sim.requests.length = 0;
    const r = await source(org.appSource()).read();
    org.sim.setFaults([]);
    expect(r.users).toHaveLength(451);
    const log = org.sim.requests.map((q) => `${q.route} ${q.status}`);
    const at = log.indexOf('group-users 401');
    expect(at).toBeGreaterThan(0);
    // Every member list in flight with the old token renews it (the SDK's one retry on a 401).
    expect(log.filter((x) => x === 'token 200').length).toBeGreaterThanOrEqual(2);
  });

  it('a page that keeps failing fails the whole read, naming the page', async () => {
    org.sim.setFaults([{ kind: 'server-error', route: 'users', page: 2 }]);
    const e = await failure(source(org.tokenSource()).read());
    org.sim.setFaults([]);
    expect(e.code).toBe('E_SOURCE_FAILED');
    expect(e.message).toMatch(/GET \/api\/v1\/users page 2 failed after 4 attempts \(HTTP 500 E0000009\); nothing was changed/);
    org.sim.setFaults([{ kind: 'server-error', route: 'group-users', page: 1, times: 100 }]);
    const g = await failure(source(org.tokenSource()).read());
    org.sim.setFaults([]);
    expect(g.message).toMatch(/GET \/api\/v1\/groups\/00g\w+\/users page 1 failed after 4 attempts/);
  });

  it('a page link to another origin is not followed (the token stays home), a paging loop is cut', async () => {
    org.sim.setFaults([{ kind: 'foreign-link', route: 'users', page: 2, times: 1 }]);
    const foreign = await failure(source(org.tokenSource()).read());
    expect(foreign.message).toMatch(
      /GET \/api\/v1\/users page 2 failed: the server sent a page link to another origin \(http:\/\/okta-sim\.invalid\); not followed/,
    );
    org.sim.setFaults([{ kind: 'repeat-link', route: 'users', page: 1, times: 1 }]);
    const loop = await failure(source(org.tokenSource()).read());
    org.sim.setFaults([]);
    expect(loop.message).toMatch(/the server repeated a page link \(a paging loop\)/);
  });

  it('changes(cursor): a full read first, then only users and groups changed after the cursor, each group whole', async () => {
    const s = source(org.tokenSource());
    expect(s.changeMechanism().name).toBe('okta-last-updated');
    const first = await s.changes(undefined);
    expect(first.kind).toBe('full');
    if (first.kind !== 'full') return;
    expect(first.reason).toBe('no cursor');
    expect(first.state.users).toHaveLength(451);
    // The first cursor reaches back over clock skew: what changed just before the read is reported once more.
    const drained = delta(await s.changes(first.cursor));
    const idle = await s.changes(drained.cursor);
    expect(idle).toEqual({
      kind: 'delta',
      cursor: drained.cursor,
      users: { upserted: [], removed: [] },
      groups: { upserted: [], removed: [] },
      rejected: [],
      changedAt: {},
    });
    const sim = org.sim.org;
    sim.updateUser('user00042@example.com', (u) => {
      u.status = 'SUSPENDED';
    });
    sim.updateUser('user00043@example.com', (u) => {
      u.profile['title'] = 'Director';
    });
    const moved = sim.user('user00044@example.com');
    sim.addMember('Group 3', moved.id);
    const next = delta(await s.changes(drained.cursor));
    expect(next.users.upserted.map((u) => [u.userName, u.active]).sort()).toEqual([
      ['user00042@example.com', false],
      ['user00043@example.com', true],
    ]);
    expect(next.users.upserted.find((u) => u.userName === 'user00043@example.com')?.attributes['profile']).toMatchObject({
      title: 'Director',
    });
    expect(next.changedAt[sim.user('user00043@example.com').id]).toBeGreaterThan(0);
    // Rule groups re-evaluate on any user change; Group 3 changed by assignment, listed with every member.
    const g3 = next.groups.upserted.find((g) => g.displayName === 'Group 3');
    expect(g3?.members).toContain(moved.id);
    const full3 = first.state.groups.find((g) => g.displayName === 'Group 3')!;
    expect(g3!.members.length).toBe(full3.members.length + (full3.members.includes(moved.id) ? 0 : 1));
    expect(Date.parse(next.cursor)).toBeGreaterThan(Date.parse(drained.cursor));
    expect(delta(await s.changes(next.cursor)).users.upserted).toEqual([]);
    expect(await s.changes('yesterday')).toMatchObject({ kind: 'full', reason: 'cursor expired' });
  });

  it('a user deprovisioned out of users.statuses is removed in the next changes()', async () => {
    const live = ['STAGED', 'PROVISIONED', 'ACTIVE', 'RECOVERY', 'PASSWORD_EXPIRED', 'LOCKED_OUT', 'SUSPENDED'] as const;
    const s = source({ ...org.tokenSource(), users: { statuses: [...live] } });
    const first = await s.changes(undefined);
    const drained = delta(await s.changes(first.cursor));
    const sim = org.sim.org;
    const leaver = sim.user('user00050@example.com');
    sim.updateUser('user00050@example.com', (u) => {
      u.status = 'DEPROVISIONED';
    });
    const r = delta(await s.changes(drained.cursor));
    expect(r.users.removed).toEqual([leaver.id]);
    expect(r.users.upserted.map((u) => u.externalId)).not.toContain(leaver.id);
  });

  it('each credential and permission mistake: a fatal error that names its fix, never the secret', async () => {
    const wrong = join(org.dir, 'wrong-token');
    writeFileSync(wrong, '00wrongTokenValue123456789\n');
    const badToken = await failure(source(org.tokenSource({ apiTokenFile: wrong })).read());
    expect(badToken.code).toBe('E_AUTH_INVALID');
    expect(badToken.message).toMatch(/Okta refused the API token in apiTokenFile .*Security → API → Tokens → Create token/);
    expect(badToken.message).not.toContain('00wrongTokenValue');

    org.sim.setApiTokens([{ token: API_TOKEN }]);
    const noRole = await failure(source(org.tokenSource()).read());
    org.sim.setApiTokens([{ token: API_TOKEN, adminRole: 'READ_ONLY_ADMIN' }]);
    expect(noRole.code).toBe('E_AUTH_FORBIDDEN');
    expect(noRole.message).toMatch(/acts with the admin roles of the user who created it.*Read-Only Administrator/);
    expect(noRole.message).not.toContain(API_TOKEN);

    const other = generateServiceApp({ clientId: org.app.app.clientId });
    const staleKey = join(org.dir, 'stale.pem');
    writeFileSync(staleKey, other.privateKeyPem);
    const badKey = await failure(source(org.appSource({ privateKeyFile: staleKey })).read());
    expect(badKey.code).toBe('E_AUTH_INVALID');
    expect(badKey.message).toMatch(/rejected the signature of the client assertion .*Public Keys/);
    expect(badKey.message).not.toContain('PRIVATE KEY');

    const unknown = await failure(source(org.appSource({ clientId: '0oaNoSuchApp000000001' })).read());
    expect(unknown.message).toMatch(/does not know the service app 0oaNoSuchApp000000001/);

    org.sim.setServiceApps([{ ...org.app.app, grantedScopes: ['okta.users.read'] }]);
    const noScope = await failure(source(org.appSource()).read());
    expect(noScope.code).toBe('E_AUTH_FORBIDDEN');
    expect(noScope.message).toMatch(/not granted okta\.groups\.read\. Fix: .*Okta API Scopes → Grant okta\.groups\.read/);

    org.sim.setServiceApps([{ ...org.app.app, adminRole: undefined }]);
    const appNoRole = await failure(source(org.appSource()).read());
    expect(appNoRole.code).toBe('E_AUTH_FORBIDDEN');
    expect(appNoRole.message).toMatch(/has no admin role .*Admin roles → Edit assignments → Read-Only Administrator/);
    org.sim.setServiceApps([org.app.app]);

    expect(await source(org.appSource()).check()).toMatch(
      /^service app 0oa\S+ \(scopes: okta\.users\.read, okta\.groups\.read\); users and groups readable/,
    );
  });
});

describe('Okta source: entries it cannot use', () => {
  it('a bad login, a duplicate login and a duplicate group name are rejected with their identity; the others are read', async () => {
    const small = await startTestOktaOrg({ users: 3, groups: 1 });
    try {
      const o = small.sim.org;
      const spaced = o.addUser({ login: 'bad login@example.com', email: 'bad@example.com' });
      const twin = o.addUser({ login: 'USER00001@example.com', email: 'twin@example.com' });
      const dupGroup = o.addGroup('Group 0', 'APP_GROUP');
      const s = new OktaSource(oktaSourceSchema.parse(small.tokenSource()), { configDir: small.dir });
      const r = await s.read();
      expect(r.users).toHaveLength(3);
      const byId = new Map(r.rejected.map((x) => [x.externalId, x]));
      expect(byId.get(spaced.id)).toMatchObject({ kind: 'user', userName: 'bad login@example.com' });
      expect(byId.get(spaced.id)?.reason).toMatch(/white space|space/i);
      // Which of the two same-login users is kept depends on id order; the other is rejected, naming it.
      const rejectedTwin = r.rejected.find((x) => x.kind === 'user' && x.externalId !== spaced.id);
      expect(rejectedTwin?.reason).toMatch(/duplicate/i);
      expect([twin.id, o.user('user00001@example.com').id]).toContain(rejectedTwin?.externalId);
      const g = r.rejected.find((x) => x.kind === 'group');
      expect(g).toMatchObject({ displayName: 'Group 0', reason: expect.stringMatching(/duplicate/i) });
      expect([dupGroup.id, o.group('Group 0').id]).toContain(g?.externalId);
      expect(r.groups).toHaveLength(1);
    } finally {
      await small.close();
    }
  });
});

describe('Okta source over HTTPS', () => {
  it('trusts a private CA given as caFile; without it, a TLS error that names the fix', async () => {
    const { mkdtempSync, readFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { createTestCa } = await import('../helpers/test-ca.ts');
    const ca = createTestCa(mkdtempSync(join(tmpdir(), 'okta-ca-')));
    const tlsOrg = await startTestOktaOrg(
      { users: 5, groups: 1 },
      { tls: { key: readFileSync(ca.keyFile, 'utf8'), cert: readFileSync(ca.certFile, 'utf8') } },
    );
    try {
      expect(tlsOrg.sim.url).toMatch(/^https:\/\/127\.0\.0\.1:/);
      const input = { ...tlsOrg.tokenSource(), allowInsecureHttp: false };
      const ok = new OktaSource(oktaSourceSchema.parse({ ...input, caFile: ca.caFile }), { configDir: tlsOrg.dir });
      expect((await ok.read()).users).toHaveLength(5);
      await ok.close();
      const e = await failure(new OktaSource(oktaSourceSchema.parse(input), { configDir: tlsOrg.dir }).read());
      expect(e.code).toBe('E_CONFIG_INVALID');
      expect(e.message).toMatch(/TLS verification of https:\/\/127\.0\.0\.1:\d+ failed \(\w+\); trust its CA with the source's caFile/);
    } finally {
      await tlsOrg.close();
    }
  });
});
