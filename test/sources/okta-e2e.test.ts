/**
 * Okta → platform, end to end through the CLI as an operator runs it: the real Okta SDK
 * reads the Okta simulator (5,000 users on 25 pages in every status, 300 groups: Okta
 * groups, application groups and rule-driven groups) and the engine reconciles into the
 * platform simulator. Lifecycle events: first sync under a tight rate limit, nothing
 * changed, suspensions and deprovisionings, a read that dies on page 20 of 25, and each
 * credential and permission mistake.
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateServiceApp } from '../../src/simulator/okta/index.ts';
import { startSimulator, type Simulator } from '../../src/simulator/index.ts';
import { BIN } from '../cli/run-cli.ts';
import { startTestOktaOrg, type TestOktaOrg } from '../helpers/okta-org.ts';

const USERS = 5000;
let okta: TestOktaOrg;
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

function writeConfig(name: string, source: Record<string, unknown> = okta.tokenSource() as Record<string, unknown>): string {
  const file = join(okta.dir, name);
  const cfg = {
    tenant: 'okta',
    platform: { baseUrl: sim.url, token: 'test-token', allowInsecureHttp: true, scim: { pageSize: 1000 } },
    provisioning: { source },
    state: { dir: join(okta.dir, 'state') },
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

const INACTIVE = new Set(['SUSPENDED', 'DEPROVISIONED', 'STAGED']);

/** What the Okta org says each group holds, from the simulator's own model. */
function expectedGroups(created: ReadonlySet<string>): Map<string, string[]> {
  const o = okta.sim.org;
  const out = new Map<string, string[]>();
  for (const g of o.listGroups()) {
    if (g.type === 'BUILT_IN') continue;
    out.set(
      g.profile.name,
      o
        .members(g.id)
        .map((u) => u.profile.login)
        .filter((l) => created.has(l))
        .sort(),
    );
  }
  return out;
}

const plan = async (config: string) => {
  const r = await cli(['plan', '--config', config, '--json']);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as { summary: Record<string, number> };
};

beforeAll(async () => {
  okta = await startTestOktaOrg(
    { users: USERS, groups: 295, suspendedEvery: 50, deprovisionedEvery: 100, lockedOutEvery: 200, appGroupEvery: 10, rules: true },
    { rateLimitWindowSeconds: 1 },
  );
  sim = await startSimulator({ maxPageSize: 1000, recordRequests: true });
}, 60_000);

afterAll(async () => {
  await sim?.close();
  await okta?.close();
});

describe('Okta → platform (CLI)', () => {
  it('first sync under a tight rate limit: 5,000 users in every status and 300 groups, paced without a single 429', async () => {
    // Ten users pages per second: the read of 25 pages has to wait for the window twice or more.
    okta.sim.rateLimiter.limits.users = 10;
    okta.sim.requests.length = 0;
    const r = await cli(['apply', '--config', writeConfig('config.yaml'), '--json']);
    okta.sim.rateLimiter.limits.users = 600;
    expect(r.code, r.stderr).toBe(0);
    const pages = okta.sim.requests.filter((q) => q.route === 'users');
    expect(pages).toHaveLength(25);
    expect(okta.sim.requests.filter((q) => q.status === 429)).toEqual([]);
    // The read used the window down to its reserve (rateLimitReserve: 2), then waited for the reset.
    expect(Math.min(...pages.map((q) => q.remaining ?? 99))).toBe(2);

    const all = okta.sim.org.listUsers();
    expect(all).toHaveLength(USERS);
    const created = new Set(all.filter((u) => !INACTIVE.has(u.status)).map((u) => u.profile.login));
    expect(all.filter((u) => u.status === 'SUSPENDED')).toHaveLength(100);
    expect(all.filter((u) => u.status === 'DEPROVISIONED')).toHaveLength(50);
    expect(all.filter((u) => u.status === 'LOCKED_OUT').length).toBeGreaterThan(0);
    const st = platform();
    expect(st.users.size).toBe(4850);
    for (const u of all)
      expect(st.users.get(u.profile.login)).toEqual(created.has(u.profile.login) ? { active: true, externalId: u.id } : undefined);
    const out = JSON.parse(r.stdout) as { plan: { summary: Record<string, number> } };
    expect(out.plan.summary).toMatchObject({ usersCreate: 4850, groupsCreate: 300 });
    const expected = expectedGroups(created);
    expect(st.groups.size).toBe(300);
    expect(st.groups).toEqual(expected);
    // Application groups and rule-driven groups are there like any other.
    expect(st.groups.get('Group 9')!.length).toBeGreaterThan(0);
    expect(st.groups.get('Dept Sales')!.length).toBeGreaterThan(900);
  }, 240_000);

  it('nothing changed in Okta: the next plan is empty', async () => {
    const p = await plan(writeConfig('config.yaml'));
    expect(p.summary['changes']).toBe(0);
  }, 120_000);

  it('users suspended or deprovisioned in Okta are deactivated on the platform, and only they', async () => {
    okta.sim.org.updateUser('user04003@example.com', (u) => {
      u.status = 'SUSPENDED';
    });
    okta.sim.org.updateUser('user04007@example.com', (u) => {
      u.status = 'DEPROVISIONED';
    });
    const before = platform();
    const r = await cli(['apply', '--config', writeConfig('config.yaml'), '--json']);
    expect(r.code, r.stderr).toBe(0);
    const after = platform();
    const flipped = [...after.users]
      .filter(([name, u]) => before.users.get(name)!.active !== u.active)
      .map(([name]) => name)
      .sort();
    expect(flipped).toEqual(['user04003@example.com', 'user04007@example.com']);
    expect(after.users.get('user04003@example.com')!.active).toBe(false);
    expect(after.users.get('user04007@example.com')!.active).toBe(false);
    expect((await plan(writeConfig('config.yaml'))).summary['changes']).toBe(0);
  }, 240_000);

  it('a read that fails on page 20 of 25 changes nothing on the platform', async () => {
    okta.sim.org.updateUser('user00501@example.com', (u) => {
      u.status = 'SUSPENDED';
    });
    okta.sim.org.setMembers('Group 10', []);
    okta.sim.setFaults([{ kind: 'server-error', route: 'users', page: 20 }]);
    const before = { users: sim.store.users(), groups: sim.store.groups() };
    sim.clearRequests();
    okta.sim.requests.length = 0;
    const r = await cli(['apply', '--config', writeConfig('config.yaml'), '--json']);
    okta.sim.setFaults([]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /E_SOURCE_FAILED.*GET \/api\/v1\/users page 20 failed after 4 attempts \(HTTP 500 E0000009\); nothing was changed/,
    );
    expect(sim.requests.filter((q) => q.method !== 'GET')).toEqual([]);
    expect({ users: sim.store.users(), groups: sim.store.groups() }).toEqual(before);
    expect(okta.sim.requests.filter((q) => q.route === 'users').map((q) => q.status)).toEqual([
      ...Array<number>(19).fill(200),
      500,
      500,
      500,
      500,
    ]);
    expect(okta.sim.requests.filter((q) => q.route === 'group-users')).toEqual([]);
  }, 240_000);

  it('a revoked token, a stale key, a scope not granted, an app without admin role: exit code 2, the fix named, nothing written', async () => {
    sim.clearRequests();
    const wrong = join(okta.dir, 'revoked-token');
    writeFileSync(wrong, '00revokedTokenValue0000000000\n');
    const revoked = await cli(['apply', '--config', writeConfig('revoked.yaml', okta.tokenSource({ apiTokenFile: wrong }) as never)]);
    expect(revoked.code).toBe(2);
    expect(revoked.stderr).toMatch(/error \[E_AUTH_INVALID\]: .*Okta refused the API token in apiTokenFile.*Create token/);
    expect(revoked.stderr).not.toContain('00revokedTokenValue');

    const stale = join(okta.dir, 'stale.pem');
    writeFileSync(stale, generateServiceApp().privateKeyPem);
    const badKey = await cli(['apply', '--config', writeConfig('stale-key.yaml', okta.appSource({ privateKeyFile: stale }) as never)]);
    expect(badKey.code).toBe(2);
    expect(badKey.stderr).toMatch(/error \[E_AUTH_INVALID\]: Okta rejected the signature of the client assertion/);
    expect(badKey.stderr).not.toContain('PRIVATE KEY');

    okta.sim.setServiceApps([{ ...okta.app.app, grantedScopes: ['okta.users.read'] }]);
    const noScope = await cli(['apply', '--config', writeConfig('app.yaml', okta.appSource() as never)]);
    expect(noScope.code).toBe(2);
    expect(noScope.stderr).toMatch(
      /error \[E_AUTH_FORBIDDEN\]: .*not granted okta\.groups\.read\. Fix: .*Okta API Scopes → Grant okta\.groups\.read/,
    );

    // validate --check-connectivity says the same, as a failed source check, and exits 2.
    okta.sim.setServiceApps([{ ...okta.app.app, adminRole: undefined }]);
    const v = await cli(['validate', '--config', writeConfig('app.yaml', okta.appSource() as never), '--check-connectivity']);
    expect(v.code).toBe(2);
    expect(v.stdout).toMatch(/source\s+failed\s+\[E_AUTH_FORBIDDEN\] .*has no admin role .*Admin roles → Edit assignments/);
    okta.sim.setServiceApps([okta.app.app]);
    const ok = await cli(['validate', '--config', writeConfig('app.yaml', okta.appSource() as never), '--check-connectivity']);
    expect(ok.stdout).toMatch(
      /source\s+ok\s+okta:127\.0\.0\.1:\d+ as 0oa\w+: service app 0oa\w+ \(scopes: okta\.users\.read, okta\.groups\.read\)/,
    );
    expect(sim.requests.filter((q) => q.method !== 'GET')).toEqual([]);
  }, 120_000);
});
