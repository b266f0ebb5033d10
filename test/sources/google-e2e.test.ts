/**
 * Google Workspace → platform, end to end through the CLI as an operator runs it: the real
 * Google clients read the Directory API simulator (5,000 users on 10 pages, 300 groups with
 * nesting and a cycle) and the engine reconciles into the platform simulator. Lifecycle
 * events: first sync, nothing changed, suspensions, a read that dies on page 7 of 10, and
 * the three day-one credential mistakes.
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateServiceAccount } from '../../src/simulator/google/index.ts';
import { startSimulator, type Simulator } from '../../src/simulator/index.ts';
import { SCOPES } from '../../src/sources/google/schema.ts';
import { BIN, runCli } from '../cli/run-cli.ts';
import { startTestWorkspace, type TestWorkspace } from '../helpers/google-workspace.ts';

const USERS = 4999; // + the admin = 5,000 users = 10 pages of 500
const GROUPS = 300;
let ws: TestWorkspace;
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
  const file = join(ws.dir, name);
  const cfg = {
    tenant: 'gws',
    platform: { baseUrl: sim.url, token: 'test-token', allowInsecureHttp: true, scim: { pageSize: 1000 } },
    provisioning: { source: { ...ws.source(), ...source } },
    state: { dir: join(ws.dir, 'state') },
    logging: { level: 'warn' },
  };
  writeFileSync(file, JSON.stringify(cfg, null, 2));
  return file;
}

/** Platform state as plain data: users by userName, groups by name → sorted member userNames. */
function platform() {
  const us = sim.store.users();
  const nameById = new Map(us.map((u) => [u.id, u.userName]));
  return {
    users: new Map(us.map((u) => [u.userName, { active: u.active !== false, externalId: u.externalId }])),
    groups: new Map(sim.store.groups().map((g) => [g.displayName, (g.members ?? []).map((m) => nameById.get(m.value) as string).sort()])),
  };
}

/** What the Google workspace says each group should hold, flattened independently of the source code. */
function expectedGroups(): Map<string, string[]> {
  const w = ws.sim.workspace;
  // Users suspended before their first sync are never created, so they are members of nothing.
  const created = new Set(
    w
      .listUsers()
      .filter((u) => !u.suspended && !u.archived)
      .map((u) => u.primaryEmail),
  );
  const direct = new Map(w.listGroups().map((g) => [g.id, w.listMembers(g)]));
  const out = new Map<string, string[]>();
  for (const g of w.listGroups()) {
    const users = new Set<string>();
    const seen = new Set<string>();
    const walk = (id: string): void => {
      if (seen.has(id)) return;
      seen.add(id);
      for (const m of direct.get(id) ?? []) {
        if (m.type === 'USER' && m.email && created.has(m.email)) users.add(m.email);
        if (m.type === 'GROUP') walk(m.id);
      }
    };
    walk(g.id);
    out.set(g.name, [...users].sort());
  }
  return out;
}

const plan = async (config: string) => {
  const r = await cli(['plan', '--config', config, '--json']);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as { summary: Record<string, number> };
};

beforeAll(async () => {
  ws = await startTestWorkspace({ users: USERS, groups: GROUPS, suspendedEvery: 50 });
  sim = await startSimulator({ maxPageSize: 1000, recordRequests: true });
}, 60_000);

afterAll(async () => {
  await sim?.close();
  await ws?.close();
});

describe('Google Workspace → platform (CLI)', () => {
  it('first sync: 5,000 users and 300 groups with nested groups and a cycle; users already suspended are not created', async () => {
    // Google throttles along the way: the read backs off and completes.
    ws.sim.setFaults([
      { kind: 'rate-limit-429', route: 'users', page: 3, times: 2, retryAfterSeconds: 0 },
      { kind: 'user-rate-limit-403', route: 'members', times: 3 },
    ]);
    const r = await cli(['apply', '--config', writeConfig('config.yaml'), '--json']);
    ws.sim.setFaults([]);
    expect(r.code, r.stderr).toBe(0);
    expect(ws.sim.requests.filter((q) => q.fault !== undefined)).toHaveLength(5);
    const st = platform();
    const google = ws.sim.workspace.listUsers();
    expect(google).toHaveLength(5000);
    const suspended = google.filter((u) => u.suspended);
    expect(suspended).toHaveLength(100);
    expect(st.users.size).toBe(4900);
    for (const u of google) expect(st.users.get(u.primaryEmail)).toEqual(u.suspended ? undefined : { active: true, externalId: u.id });
    const out = JSON.parse(r.stdout) as { plan: { summary: Record<string, number> } };
    expect(out.plan.summary).toMatchObject({ usersCreate: 4900, groupsCreate: 300 });
    const expected = expectedGroups();
    expect(st.groups.size).toBe(GROUPS);
    expect(st.groups).toEqual(expected);
    // Nesting and the cycle are in there: Group 0 holds Group 2's users; Groups 3 and 4 hold each other's.
    expect(st.groups.get('Group 0')!.length).toBe(expected.get('Group 0')!.length);
    expect(st.groups.get('Group 0')).toEqual(expect.arrayContaining(st.groups.get('Group 2')!));
    expect(st.groups.get('Group 3')).toEqual(st.groups.get('Group 4'));
  }, 240_000);

  it('nothing changed in Google: the next plan is empty', async () => {
    const p = await plan(writeConfig('config.yaml'));
    expect(p.summary['changes']).toBe(0);
  }, 120_000);

  it('users suspended in Google are deactivated on the platform, and only they', async () => {
    const d = ws.sim.workspace.domain;
    const suspended = [100, 200, 300, 4000].map((n) => `user${String(n).padStart(5, '0')}@${d}`);
    for (const e of suspended)
      ws.sim.workspace.updateUser(e, (u) => {
        u.suspended = true;
      });
    const before = platform();
    const r = await cli(['apply', '--config', writeConfig('config.yaml'), '--json']);
    expect(r.code, r.stderr).toBe(0);
    const after = platform();
    const flipped = [...after.users]
      .filter(([name, u]) => before.users.get(name)!.active !== u.active)
      .map(([name]) => name)
      .sort();
    expect(flipped).toEqual(suspended.sort());
    expect(suspended.every((e) => after.users.get(e)!.active === false)).toBe(true);
    expect((await plan(writeConfig('config.yaml'))).summary['changes']).toBe(0);
  }, 240_000);

  it('a read that fails on page 7 of 10 changes nothing on the platform', async () => {
    const d = ws.sim.workspace.domain;
    // Google changed (so a run that went ahead would write), then page 7 keeps failing.
    ws.sim.workspace.updateUser(`user00500@${d}`, (u) => {
      u.suspended = true;
    });
    ws.sim.workspace.setMembers(`group0010@${d}`, []);
    ws.sim.setFaults([{ kind: 'backend-error', route: 'users', page: 7 }]);
    const before = { users: sim.store.users(), groups: sim.store.groups() };
    sim.clearRequests();
    ws.sim.requests.length = 0;
    const r = await cli(['apply', '--config', writeConfig('config.yaml'), '--json']);
    ws.sim.setFaults([]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/E_SOURCE_FAILED.*users\.list page 7 failed after 4 attempts \(HTTP 500 backendError\); nothing was changed/);
    expect(sim.requests.filter((q) => q.method !== 'GET')).toEqual([]);
    expect({ users: sim.store.users(), groups: sim.store.groups() }).toEqual(before);
    // Pages 1-6 read, page 7 tried four times, nothing after it.
    expect(ws.sim.requests.filter((q) => q.route === 'users').map((q) => q.status)).toEqual([
      200, 200, 200, 200, 200, 200, 500, 500, 500, 500,
    ]);
    expect(ws.sim.requests.filter((q) => q.route === 'members')).toEqual([]);
  }, 240_000);

  it('Google says nobody is there: the source refuses, and with allowEmpty the deletion guard holds everything', async () => {
    const before = { users: sim.store.users(), groups: sim.store.groups() };
    sim.clearRequests();
    const nobody = { users: { query: "orgUnitPath='/Nowhere'" } };
    const refused = await cli(['apply', '--config', writeConfig('empty.yaml', nobody)]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/E_SOURCE_FAILED.*returned no usable users .*refusing an empty directory/);
    const guarded = await cli(['apply', '--config', writeConfig('empty-allowed.yaml', { ...nobody, allowEmpty: true })]);
    expect(guarded.code).toBe(3);
    expect(guarded.stderr).toMatch(/the source returned no users while \d+ objects are managed/);
    expect(sim.requests.filter((q) => q.method !== 'GET')).toEqual([]);
    expect({ users: sim.store.users(), groups: sim.store.groups() }).toEqual(before);
  }, 120_000);

  it('a wrong key, missing delegation and a missing scope: a clear error, exit code 2, nothing written', async () => {
    const other = generateServiceAccount({ clientEmail: ws.sa.account.clientEmail });
    writeFileSync(join(ws.dir, 'stale-key.json'), other.keyFileJson);
    sim.clearRequests();
    const wrongKey = await runCli([
      'apply',
      '--config',
      writeConfig('wrong-key.yaml', { serviceAccountKeyFile: join(ws.dir, 'stale-key.json') }),
    ]);
    expect(wrongKey.code).toBe(2);
    expect(wrongKey.stderr).toMatch(
      /error \[E_AUTH_INVALID\]: Google rejected the signature of the service account key for directory-sync@sim-project\.iam\.gserviceaccount\.com/,
    );
    expect(wrongKey.stderr).not.toContain('PRIVATE KEY');

    ws.sim.setServiceAccounts([{ ...ws.sa.account, delegatedScopes: undefined } as never]);
    const noDelegation = await runCli(['apply', '--config', writeConfig('config.yaml')]);
    expect(noDelegation.code).toBe(2);
    expect(noDelegation.stderr).toMatch(
      new RegExp(
        `error \\[E_AUTH_FORBIDDEN\\]: .*domain-wide delegation is not granted to client ID ${ws.sa.account.clientId}.*Manage Domain Wide Delegation`,
      ),
    );

    ws.sim.setServiceAccounts([{ ...ws.sa.account, delegatedScopes: [SCOPES.users, SCOPES.members] }]);
    const noScope = await runCli(['apply', '--config', writeConfig('config.yaml')]);
    expect(noScope.code).toBe(2);
    expect(noScope.stderr).toMatch(
      /error \[E_AUTH_FORBIDDEN\]: .*lacks scope https:\/\/www\.googleapis\.com\/auth\/admin\.directory\.group\.readonly/,
    );

    // validate --check-connectivity says the same, as a failed source check; a refused credential exits 2 there too.
    const v = await runCli(['validate', '--config', writeConfig('config.yaml'), '--check-connectivity']);
    expect(v.code).toBe(2);
    expect(v.stdout).toMatch(/source\s+failed\s+\[E_AUTH_FORBIDDEN\] .*lacks scope .*group\.readonly/);
    ws.sim.setServiceAccounts([ws.sa.account]);
    const ok = await runCli(['validate', '--config', writeConfig('config.yaml'), '--check-connectivity']);
    expect(ok.stdout).toMatch(/source\s+ok\s+google-workspace:my_customer as admin@example\.com: token for admin@example\.com/);
    expect(sim.requests.filter((q) => q.method !== 'GET')).toEqual([]);
  }, 120_000);
});
