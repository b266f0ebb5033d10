/**
 * The Entra ID source against the simulator through the real `@azure/identity` credentials
 * and Graph over HTTPS: each credential kind, scoping, throttling, the all-or-nothing rule,
 * each credential and permission mistake with its fix, and delta rounds.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateCertificate } from '../../src/simulator/entra/index.ts';
import { entraIdSourceSchema, type EntraIdSourceInput } from '../../src/sources/entra/schema.ts';
import { EntraIdSource } from '../../src/sources/entra/source.ts';
import { isSyncError } from '../../src/errors.ts';
import { READ_PERMISSIONS, startTestTenant, type TestTenant } from '../helpers/entra-tenant.ts';

let t: TestTenant;

const source = (over: Partial<EntraIdSourceInput> = {}): EntraIdSource =>
  new EntraIdSource(entraIdSourceSchema.parse(t.source(over)), { configDir: t.dir });

async function failure(over: Partial<EntraIdSourceInput> = {}): Promise<{ code: string; message: string }> {
  const s = source(over);
  try {
    await s.read();
  } catch (e) {
    if (!isSyncError(e)) throw e;
    return { code: e.code, message: e.message };
  } finally {
    await s.close();
  }
  throw new Error('read succeeded');
}

beforeAll(async () => {
  t = await startTestTenant({ users: 250, groups: 12 });
}, 60_000);

afterAll(async () => {
  await t?.close();
});

describe('Entra ID source', () => {
  it('reads users and groups with a client secret: disabled accounts inactive, extensions and custom security attributes for mapping', async () => {
    const s = source({
      users: {
        select: ['department', 'extension_b7f1c0de00004e1a9d2c5a6b7c8d9e0f_costCenter'],
        onPremisesExtensionAttributes: true,
        customSecurityAttributes: true,
      },
      pageSize: 100,
    });
    const state = await s.read();
    await s.close();
    expect(state.users).toHaveLength(250);
    expect(state.stats['userPages']).toBe(3);
    const u7 = state.users.find((u) => u.userName === `user000007@${t.sim.directory.domain}`)!;
    expect(u7.active).toBe(false);
    expect(state.users.filter((u) => !u.active)).toHaveLength(5);
    const u0 = state.users.find((u) => u.userName === `user000000@${t.sim.directory.domain}`)!;
    expect(u0).toMatchObject({
      externalId: t.sim.directory.user(u0.userName)!.id,
      givenName: 'User',
      familyName: 'Number 0',
      displayName: 'User Number 0',
      emails: [u0.userName],
      active: true,
    });
    expect(u0.attributes).toMatchObject({
      employeeId: 'E000000',
      department: 'dept-0',
      extensions: { costCenter: 'CC-0' },
      onPremisesExtensionAttributes: { extensionAttribute1: 'site-0' },
      customSecurityAttributes: { Analytics: { clearance: 'internal' } },
    });
    // $select names only what the config needs.
    const usersReq = t.sim.requests.filter((r) => r.route === 'users').at(-1)!;
    expect(usersReq.query['$select']!.split(',')).not.toContain('jobTitle');
    expect(state.groups).toHaveLength(12);
    const g0 = state.groups.find((g) => g.displayName === 'Group 0000')!;
    const g2 = state.groups.find((g) => g.displayName === 'Group 0002')!;
    expect(g0.members).toEqual(expect.arrayContaining(g2.members));
    const g3 = state.groups.find((g) => g.displayName === 'Group 0003')!;
    const g4 = state.groups.find((g) => g.displayName === 'Group 0004')!;
    expect([...g3.members].sort()).toEqual([...g4.members].sort());
  }, 30_000);

  it('reads with a certificate and with a workload identity token', async () => {
    for (const credential of [
      { type: 'certificate' as const, certificateFile: t.certificatePath },
      { type: 'workloadIdentity' as const, tokenFile: t.tokenPath },
    ]) {
      const s = source({ credential, groups: false });
      const state = await s.read();
      await s.close();
      expect(state.users).toHaveLength(250);
    }
    const tokenForms = t.sim.requests.filter((r) => r.route === 'token' && r.status === 200);
    expect(tokenForms.length).toBeGreaterThanOrEqual(2);
  }, 30_000);

  it('transitive members, Microsoft 365 groups only, and assigned-group scoping', async () => {
    const s = source({ groups: { types: ['microsoft365'], members: 'transitive' } });
    const state = await s.read();
    await s.close();
    expect(state.groups.map((g) => g.displayName).sort()).toEqual(['Group 0002', 'Group 0005', 'Group 0008', 'Group 0011']);
    const g1 = t.sim.directory.groupByName('Group 0001')!;
    const scoped = source({ users: { assignedGroups: [g1.id] }, groups: false });
    const st2 = await scoped.read();
    await scoped.close();
    const expected = t.sim.directory
      .transitiveMembers(g1.id)
      .filter((m) => m.type === 'user')
      .map((m) => m.id)
      .sort();
    expect(st2.users.map((u) => u.externalId).sort()).toEqual(expected);
  }, 30_000);

  it('a throttled read (429 and 503 with Retry-After), a cut body and a reset connection: backs off and completes', async () => {
    t.sim.setFaults([
      { kind: 'throttle-429', route: 'users', page: 2, times: 2, retryAfterSeconds: 0 },
      { kind: 'unavailable-503', route: 'members', times: 1, retryAfterSeconds: 0 },
      { kind: 'truncate', route: 'groups', times: 1 },
      { kind: 'reset', route: 'members', times: 1 },
    ]);
    const s = source({ pageSize: 100 });
    const state = await s.read();
    await s.close();
    t.sim.setFaults([]);
    expect(state.users).toHaveLength(250);
    expect(state.groups).toHaveLength(12);
    expect(state.stats['retries']).toBe(5);
  }, 30_000);

  it('a page that keeps failing fails the whole read', async () => {
    t.sim.setFaults([{ kind: 'server-error-500', route: 'users', page: 3 }]);
    const f = await failure({ pageSize: 100 });
    t.sim.setFaults([]);
    expect(f).toMatchObject({ code: 'E_SOURCE_FAILED' });
    expect(f.message).toMatch(/users page 3 failed after 4 attempts \(HTTP 500 generalException\); nothing was changed/);
  }, 30_000);

  it('each credential mistake names its fix and never the secret', async () => {
    writeFileSync(join(t.dir, 'wrong-secret'), 'abc8Q~wrong');
    const wrongSecret = await failure({ credential: { type: 'clientSecret', clientSecretFile: join(t.dir, 'wrong-secret') } });
    expect(wrongSecret.code).toBe('E_AUTH_INVALID');
    expect(wrongSecret.message).toMatch(/rejected the client secret .*secret's Value \(not its Secret ID\).*Certificates & secrets/);
    expect(wrongSecret.message).not.toContain('abc8Q~wrong');

    const tenant = await failure({ tenantId: 'contoso-typo.onmicrosoft.com' });
    expect(tenant.code).toBe('E_CONFIG_INVALID');
    expect(tenant.message).toMatch(/tenantId contoso-typo\.onmicrosoft\.com is not a Microsoft Entra tenant/);

    // Not a config mistake: the identity platform is down or unreachable (transient, exit 1).
    const down = await failure({ authorityHost: 'https://127.0.0.1:1' });
    expect(down.code).toBe('E_SOURCE_FAILED');
    expect(down.message).toMatch(/the identity platform at 127\.0\.0\.1:1 cannot be reached \(ECONNREFUSED\)/);

    const app = await failure({ clientId: '11111111-2222-4333-8444-555555555555' });
    expect(app.message).toMatch(/the app 11111111-2222-4333-8444-555555555555 does not exist in tenant/);

    writeFileSync(join(t.dir, 'other-cert.pem'), generateCertificate('other').pem);
    const cert = await failure({ credential: { type: 'certificate', certificateFile: join(t.dir, 'other-cert.pem') } });
    expect(cert.code).toBe('E_AUTH_INVALID');
    expect(cert.message).toMatch(/certificate in certificateFile .* is not registered on the app/);

    writeFileSync(join(t.dir, 'foreign-token'), t.issuer.token('system:serviceaccount:other:other'));
    const fed = await failure({ credential: { type: 'workloadIdentity', tokenFile: join(t.dir, 'foreign-token') } });
    expect(fed.message).toMatch(/no federated credential of app .* matches this workload's token.*Federated credentials/);

    t.sim.setApps([{ ...t.app, secrets: [{ value: t.secret, expiresAt: Date.now() - 1000 }] }]);
    const expired = await failure();
    t.sim.setApps([t.app]);
    expect(expired.message).toMatch(/the client secret of app .* has expired/);
  }, 60_000);

  it('no admin consent, and a missing permission, are named', async () => {
    t.grant(READ_PERMISSIONS, false);
    const consent = await failure();
    expect(consent.code).toBe('E_AUTH_FORBIDDEN');
    expect(consent.message).toMatch(/admin consent was not granted.*Grant admin consent/);

    t.grant(['User.Read.All']);
    const members = await failure();
    expect(members.code).toBe('E_AUTH_FORBIDDEN');
    expect(members.message).toMatch(
      /lacks the Microsoft Graph application permission GroupMember\.Read\.All \(the token holds User\.Read\.All\)/,
    );

    t.grant(['GroupMember.Read.All']);
    const users = await failure();
    expect(users.message).toMatch(/lacks the Microsoft Graph application permission User\.Read\.All/);

    t.grant(['User.Read.All', 'GroupMember.Read.All']);
    const csa = await failure({ users: { customSecurityAttributes: true } });
    expect(csa.message).toMatch(/lacks the Microsoft Graph application permission CustomSecAttributeAssignment\.Read\.All/);
    // Directory.Read.All covers users and members.
    t.grant(['Directory.Read.All']);
    const s = source();
    expect((await s.read()).users).toHaveLength(250);
    await s.close();
    t.grant(READ_PERMISSIONS);
  }, 30_000);
});
