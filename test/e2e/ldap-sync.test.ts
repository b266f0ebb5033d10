/**
 * End to end through the CLI contract: slapd → plan → apply into the simulator → change the
 * directory (disable a user, move one between groups, rename a group) → apply → the exact
 * platform state. Failing sources (wrong password, unreachable) must change nothing.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Change, Attribute, Client } from 'ldapts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/index.ts';
import { escapeDnValue, type LdifEntry } from '../helpers/ldif.ts';
import type { LdapSourceInput } from '../../src/sources/ldap/schema.ts';
import { slapdAvailable, slapdSourceConfig, startSlapd, type SlapdHandle } from '../helpers/slapd.ts';

const SUFFIX = 'dc=example,dc=org';
const PEOPLE = `ou=people,${SUFFIX}`;
const GROUPS = `ou=groups,${SUFFIX}`;
const BIN = resolve(import.meta.dirname, '../../bin/scim-audit-sync.mjs');

interface DirUser {
  uid: string;
  cn: string;
  active: boolean;
}
const users: DirUser[] = [
  ...Array.from({ length: 12 }, (_, i) => ({ uid: `p${i}`, cn: `Person ${i}`, active: true })),
  { uid: 'zoe', cn: 'Zoë Åberg', active: true },
  { uid: 'smith', cn: 'Smith, John', active: true },
];
const userDn = (u: DirUser): string => (u.uid === 'smith' ? `cn=${escapeDnValue(u.cn)},${PEOPLE}` : `uid=${u.uid},${PEOPLE}`);
const byUid = (uid: string): DirUser => users.find((u) => u.uid === uid) as DirUser;
const gdn = (cn: string): string => `cn=${escapeDnValue(cn)},${GROUPS}`;

/** Directory groups: direct user uids and nested group names. */
const dirGroups: Record<string, { users: string[]; groups: string[] }> = {
  engineering: { users: ['p0', 'p1'], groups: ['platform'] },
  platform: { users: ['p2', 'p3', 'zoe'], groups: [] },
  sales: { users: ['p4', 'p5', 'smith'], groups: [] },
  'loop-a': { users: ['p6'], groups: ['loop-b'] },
  'loop-b': { users: ['p7'], groups: ['loop-a'] },
  'R&D, Paris': { users: ['p8', 'p9'], groups: [] },
};

function entries(): LdifEntry[] {
  const out: LdifEntry[] = [
    { dn: PEOPLE, attrs: { objectClass: 'organizationalUnit', ou: 'people' } },
    { dn: GROUPS, attrs: { objectClass: 'organizationalUnit', ou: 'groups' } },
  ];
  for (const u of users) {
    out.push({
      dn: userDn(u),
      attrs: {
        objectClass: 'inetOrgPerson',
        uid: u.uid,
        cn: u.cn,
        sn: u.cn.split(' ').pop() as string,
        givenName: u.cn.split(' ')[0] as string,
        mail: `${u.uid}@example.org`,
        employeeType: 'staff',
      },
    });
  }
  for (const [cn, g] of Object.entries(dirGroups)) {
    out.push({
      dn: gdn(cn),
      attrs: { objectClass: 'groupOfNames', cn, member: [...g.users.map((x) => userDn(byUid(x))), ...g.groups.map(gdn)] },
    });
  }
  return out;
}

/** The flattened membership a correct sync must produce, by group name → sorted userNames. */
function expectedGroups(): Record<string, string[]> {
  const flat = (name: string, seen = new Set<string>()): Set<string> => {
    seen.add(name);
    const g = dirGroups[name]!;
    const out = new Set(g.users);
    for (const child of g.groups) if (!seen.has(child)) flat(child, seen).forEach((u) => out.add(u));
    return out;
  };
  return Object.fromEntries(Object.keys(dirGroups).map((n) => [n, [...flat(n)].sort()]));
}

function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((res) => {
    execFile(process.execPath, [BIN, ...args], { env: { ...process.env, NO_COLOR: '1' }, timeout: 60_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 99) : 0;
      res({ code, stdout, stderr });
    });
  });
}

let sl: SlapdHandle;
let sim: Simulator;
const dir = mkdtempSync(join(tmpdir(), 'ldap-e2e-'));

function writeConfig(name: string, source: Partial<LdapSourceInput>): string {
  const file = join(dir, name);
  const src = slapdSourceConfig(
    sl,
    { people: PEOPLE, groups: GROUPS, bindPasswordFile: 'ldap-password' },
    { timeoutSeconds: 5, ...source },
  );
  const cfg = {
    tenant: 'e2e',
    platform: { baseUrl: sim.url, token: 'test-token', allowInsecureHttp: true },
    provisioning: { source: src },
    state: { dir: join(dir, 'state') },
  };
  writeFileSync(file, JSON.stringify(cfg, null, 2)); // JSON is YAML
  return file;
}

/** Platform state as plain data: users by userName, groups by name → member userNames. */
function platformState() {
  const us = sim.store.users();
  const nameById = new Map(us.map((u) => [u.id, u.userName]));
  return {
    users: Object.fromEntries(
      us.map((u) => [u.userName, { active: u.active !== false, externalId: u.externalId, displayName: u.displayName }]),
    ),
    groups: Object.fromEntries(sim.store.groups().map((g) => [g.displayName, (g.members ?? []).map((m) => nameById.get(m.value)).sort()])),
    groupIds: Object.fromEntries(sim.store.groups().map((g) => [g.displayName, g.id])),
  };
}

beforeAll(async () => {
  if (!slapdAvailable()) throw new Error('slapd is required for this test: apt-get install slapd ldap-utils');
  sl = await startSlapd({ entries: entries() });
  sim = await startSimulator();
  writeFileSync(join(dir, 'ldap-password'), `${sl.readerPassword}\n`);
});

afterAll(async () => {
  await sim?.close();
  await sl?.stop();
});

describe('LDAP → platform end to end', () => {
  const good = () => writeConfig('config.yaml', {});

  it('validate --check-connectivity binds and searches', async () => {
    const r = await run(['validate', '--config', good(), '--check-connectivity']);
    expect(r.stderr + r.stdout).toMatch(/bound to ldap:\/\/127\.0\.0\.1:\d+ as cn=reader/);
    expect(r.code).toBe(0);
  });

  it('a plan over a bind without TLS warns once, not once per construction of the source', async () => {
    const r = await run(['plan', '--config', good(), '--json']);
    expect(r.code).toBe(0);
    expect(r.stderr.match(/LDAP without TLS/g) ?? []).toHaveLength(1);
  });

  it('a wrong password or an unreachable server: clear error, nothing applied', async () => {
    const wrongPw = join(dir, 'wrong-password');
    writeFileSync(wrongPw, 'nope');
    for (const [name, src, msg] of [
      [
        'wrong.yaml',
        { bindPasswordFile: 'wrong-password' },
        /LDAP bind failed for cn=reader,dc=example,dc=org: invalid credentials \(49\)/,
      ],
      ['down.yaml', { url: 'ldap://127.0.0.1:1' }, /cannot connect to ldap:\/\/127\.0\.0\.1:1: ECONNREFUSED/],
    ] as const) {
      const r = await run(['apply', '--config', writeConfig(name, src), '--json']);
      // A refused source credential needs a config change, like the platform's 401: exit 2.
      expect(r.code).toBe(name === 'wrong.yaml' ? 2 : 1);
      expect(r.stdout + r.stderr).toMatch(msg);
      expect(r.stdout + r.stderr).not.toContain('nope');
    }
    expect(sim.store.users()).toEqual([]);
    expect(sim.store.groups()).toEqual([]);
  });

  it('plan, apply, change the directory, apply again: the exact expected platform state', async () => {
    const plan = await run(['plan', '--config', good(), '--json']);
    expect(plan.code, plan.stderr).toBe(0);
    expect(sim.store.users()).toEqual([]); // plan writes nothing

    const first = await run(['apply', '--config', good(), '--json']);
    expect(first.code, first.stderr).toBe(0);
    let st = platformState();
    expect(Object.keys(st.users).sort()).toEqual(users.map((u) => u.uid).sort());
    expect(Object.values(st.users).every((u) => u.active)).toBe(true);
    expect(st.users['zoe']!.displayName).toBe('Zoë Åberg');
    expect(st.groups).toEqual(expectedGroups());
    const idsBefore = st.groupIds;
    const extBefore = Object.fromEntries(Object.entries(st.users).map(([k, v]) => [k, v.externalId]));

    // The directory changes: p1 leaves, p2 moves from platform to sales, sales is renamed.
    const admin = new Client({ url: sl.url });
    await admin.bind(sl.adminDn, sl.adminPassword);
    await admin.modify(
      userDn(byUid('p1')),
      new Change({ operation: 'replace', modification: new Attribute({ type: 'employeeType', values: ['disabled'] }) }),
    );
    await admin.modify(
      gdn('platform'),
      new Change({ operation: 'delete', modification: new Attribute({ type: 'member', values: [userDn(byUid('p2'))] }) }),
    );
    await admin.modify(
      gdn('sales'),
      new Change({ operation: 'add', modification: new Attribute({ type: 'member', values: [userDn(byUid('p2'))] }) }),
    );
    await admin.modifyDN(gdn('sales'), `cn=revenue`);
    await admin.unbind();
    dirGroups['platform']!.users = ['p3', 'zoe'];
    dirGroups['revenue'] = { users: ['p4', 'p5', 'smith', 'p2'], groups: [] };
    delete dirGroups['sales'];

    const second = await run(['apply', '--config', good(), '--json']);
    expect(second.code, second.stderr).toBe(0);
    st = platformState();
    expect(Object.keys(st.users).sort()).toEqual(users.map((u) => u.uid).sort());
    expect(
      Object.entries(st.users)
        .filter(([, u]) => !u.active)
        .map(([k]) => k),
    ).toEqual(['p1']);
    expect(st.groups).toEqual(expectedGroups());
    // Renamed, not re-created; ids of users unchanged.
    expect(st.groupIds['revenue']).toBe(idsBefore['sales']);
    expect(Object.fromEntries(Object.entries(st.users).map(([k, v]) => [k, v.externalId]))).toEqual(extBefore);
  });
});
