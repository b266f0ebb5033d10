/**
 * Entra ID → platform, end to end through the CLI as an operator runs it: the real
 * `@azure/identity` credential and Graph over HTTPS read the Entra simulator (5,000 users on
 * 6 pages, 300 security and Microsoft 365 groups with nesting and a cycle) and the engine
 * reconciles into the platform simulator. Lifecycle events: first sync under throttling,
 * nothing changed, accounts disabled, a read that dies on its last page, and each credential
 * and permission mistake.
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/index.ts';
import { BIN } from '../cli/run-cli.ts';
import { READ_PERMISSIONS, startTestTenant, type TestTenant } from '../helpers/entra-tenant.ts';

const USERS = 5000; // 6 pages of up to 999
const GROUPS = 300;
let t: TestTenant;
let sim: Simulator;

function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { env: { PATH: process.env['PATH'] ?? '', NO_COLOR: '1' }, timeout: 240_000, maxBuffer: 256 * 1024 * 1024 },
      (err, stdout, stderr) => {
        const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : -1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

function writeConfig(name: string, source: Record<string, unknown> = {}): string {
  const file = join(t.dir, name);
  const cfg = {
    tenant: 'entra',
    platform: { baseUrl: sim.url, token: 'test-token', allowInsecureHttp: true, scim: { pageSize: 1000 } },
    provisioning: { source: { ...t.source(), ...source } },
    state: { dir: join(t.dir, 'state') },
    logging: { level: 'warn' },
  };
  writeFileSync(file, JSON.stringify(cfg, null, 2));
  return file;
}

function platform() {
  const us = sim.store.users();
  const nameById = new Map(us.map((u) => [u.id, u.userName]));
  return {
    users: new Map(us.map((u) => [u.userName, { active: u.active !== false, externalId: u.externalId }])),
    groups: new Map(sim.store.groups().map((g) => [g.displayName, (g.members ?? []).map((m) => nameById.get(m.value) as string).sort()])),
  };
}

/** What the tenant says each group should hold, flattened independently of the source code. */
function expectedGroups(): Map<string, string[]> {
  const d = t.sim.directory;
  const created = new Set(
    d
      .listUsers()
      .filter((u) => u.accountEnabled)
      .map((u) => u.id),
  );
  const out = new Map<string, string[]>();
  for (const g of d.listGroups()) {
    const users = d
      .transitiveMembers(g.id)
      .filter((m) => m.type === 'user' && created.has(m.id))
      .map((m) => d.user(m.id)!.userPrincipalName);
    out.set(g.displayName, users.sort());
  }
  return out;
}

const snapshot = () => ({ users: sim.store.users(), groups: sim.store.groups() });

beforeAll(async () => {
  t = await startTestTenant({ users: USERS, groups: GROUPS });
  sim = await startSimulator({ maxPageSize: 1000, recordRequests: true });
}, 60_000);

afterAll(async () => {
  await sim?.close();
  await t?.close();
});

describe('Entra ID → platform (CLI)', () => {
  it('first sync under throttling: 5,000 users and 300 groups with nesting and a cycle; disabled accounts are not created', async () => {
    t.sim.setFaults([
      { kind: 'throttle-429', route: 'users', page: 3, times: 2, retryAfterSeconds: 0 },
      { kind: 'unavailable-503', route: 'members', times: 2, retryAfterSeconds: 0 },
    ]);
    const r = await cli(['apply', '--config', writeConfig('config.json'), '--json']);
    t.sim.setFaults([]);
    expect(r.code, r.stderr).toBe(0);
    expect(t.sim.requests.filter((q) => q.fault !== undefined)).toHaveLength(4);
    const usersPages = t.sim.requests.filter((q) => q.route === 'users' && q.status === 200);
    expect(usersPages).toHaveLength(6);
    const st = platform();
    const entra = t.sim.directory.listUsers();
    expect(entra).toHaveLength(USERS);
    expect(entra.filter((u) => !u.accountEnabled)).toHaveLength(100);
    expect(st.users.size).toBe(4900);
    for (const u of entra)
      expect(st.users.get(u.userPrincipalName)).toEqual(u.accountEnabled ? { active: true, externalId: u.id } : undefined);
    const expected = expectedGroups();
    expect(st.groups.size).toBe(GROUPS);
    expect(st.groups).toEqual(expected);
    expect(st.groups.get('Group 0000')).toEqual(expect.arrayContaining(st.groups.get('Group 0002')!));
    expect(st.groups.get('Group 0003')).toEqual(st.groups.get('Group 0004'));
  }, 240_000);

  it('nothing changed in Entra: the next plan is empty', async () => {
    const r = await cli(['plan', '--config', writeConfig('config.json'), '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect((JSON.parse(r.stdout) as { summary: Record<string, number> }).summary['changes']).toBe(0);
  }, 120_000);

  it('accounts disabled in Entra are deactivated on the platform, and only they', async () => {
    const d = t.sim.directory;
    const disabled = [100, 200, 300, 4000].map((n) => `user${String(n).padStart(6, '0')}@${d.domain}`);
    for (const upn of disabled)
      d.updateUser(upn, (u) => {
        u.accountEnabled = false;
      });
    const before = platform();
    const r = await cli(['apply', '--config', writeConfig('config.json'), '--json']);
    expect(r.code, r.stderr).toBe(0);
    const after = platform();
    const flipped = [...after.users]
      .filter(([name, u]) => before.users.get(name)!.active !== u.active)
      .map(([name]) => name)
      .sort();
    expect(flipped).toEqual(disabled.sort());
  }, 240_000);

  it('a read that fails on its last page changes nothing on the platform', async () => {
    const d = t.sim.directory;
    d.updateUser(`user000500@${d.domain}`, (u) => {
      u.accountEnabled = false;
    });
    t.sim.setFaults([{ kind: 'server-error-500', route: 'users', page: 6 }]);
    const before = snapshot();
    sim.clearRequests();
    t.sim.requests.length = 0;
    const r = await cli(['apply', '--config', writeConfig('config.json'), '--json']);
    t.sim.setFaults([]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/E_SOURCE_FAILED.*users page 6 failed after 4 attempts \(HTTP 500 generalException\); nothing was changed/);
    expect(sim.requests.filter((q) => q.method !== 'GET')).toEqual([]);
    expect(snapshot()).toEqual(before);
    expect(t.sim.requests.filter((q) => q.route === 'users').map((q) => q.status)).toEqual([200, 200, 200, 200, 200, 500, 500, 500, 500]);
    expect(t.sim.requests.filter((q) => q.route === 'members')).toEqual([]);
  }, 240_000);

  it('each credential and permission mistake exits 2 with its fix, and writes nothing', async () => {
    const before = snapshot();
    sim.clearRequests();
    writeFileSync(join(t.dir, 'stale-secret'), 'Xyz8Q~stale-secret-value\n');
    const cases: Array<{ name: string; source?: Record<string, unknown>; setup?: () => void; expect: RegExp }> = [
      {
        name: 'wrong secret',
        source: { credential: { type: 'clientSecret', clientSecretFile: join(t.dir, 'stale-secret') } },
        expect: /error \[E_AUTH_INVALID\]: Entra rejected the client secret of app .*Certificates & secrets → New client secret/,
      },
      {
        name: 'wrong tenant',
        source: { tenantId: 'fabrikam.example' },
        expect: /error \[E_CONFIG_INVALID\]: tenantId fabrikam\.example is not a Microsoft Entra tenant/,
      },
      {
        name: 'no admin consent',
        setup: () => t.grant(READ_PERMISSIONS, false),
        expect: /error \[E_AUTH_FORBIDDEN\]: .*admin consent was not granted.*Grant admin consent/,
      },
      {
        name: 'GroupMember.Read.All missing',
        setup: () => t.grant(['User.Read.All']),
        expect: /error \[E_AUTH_FORBIDDEN\]: .*lacks the Microsoft Graph application permission GroupMember\.Read\.All/,
      },
      {
        name: 'User.Read.All missing',
        setup: () => t.grant(['GroupMember.Read.All']),
        expect: /error \[E_AUTH_FORBIDDEN\]: .*lacks the Microsoft Graph application permission User\.Read\.All/,
      },
    ];
    for (const c of cases) {
      c.setup?.();
      const r = await cli(['apply', '--config', writeConfig(`${c.name.replace(/\W+/g, '-')}.json`, c.source)]);
      expect(r.code, `${c.name}: ${r.stderr}`).toBe(2);
      expect(r.stderr, c.name).toMatch(c.expect);
      expect(r.stderr).not.toContain('stale-secret-value');
      expect(r.stderr).not.toContain(t.secret);
    }
    t.grant(READ_PERMISSIONS);
    const ok = await cli(['validate', '--config', writeConfig('config.json'), '--check-connectivity']);
    expect(ok.stdout).toMatch(
      /source\s+ok\s+entra-id:.*token for app .*clientSecret; permissions: User\.Read\.All, GroupMember\.Read\.All/,
    );
    expect(sim.requests.filter((q) => q.method !== 'GET')).toEqual([]);
    expect(snapshot()).toEqual(before);
  }, 240_000);
});
