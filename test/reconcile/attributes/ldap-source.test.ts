/**
 * LDAP end to end with user attributes: slapd → the CLI → the simulator. Directory attributes
 * (`l`, `departmentNumber`, multi-valued `businessCategory`, `employeeNumber`) are mapped to
 * platform user attributes; a mover's `l` change and a removed `departmentNumber` in the
 * directory become a changed and a cleared platform value in the next apply.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Attribute, Change, Client } from 'ldapts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Plan } from '../../../src/reconcile/plan-types.ts';
import { startSimulator, type Simulator } from '../../../src/simulator/index.ts';
import type { LdifEntry } from '../../helpers/ldif.ts';
import { slapdAvailable, startSlapd, type SlapdHandle } from '../../helpers/slapd.ts';
import { VALUES_PATH } from './support.ts';

const SUFFIX = 'dc=example,dc=org';
const PEOPLE = `ou=people,${SUFFIX}`;
const BIN = resolve(import.meta.dirname, '../../../bin/scim-audit-sync.mjs');

const people: Array<{ uid: string; attrs: Record<string, string | string[]> }> = [
  { uid: 'anna', attrs: { l: 'Berlin', departmentNumber: '4711', businessCategory: ['eu-data', 'pii'], employeeNumber: '1001' } },
  { uid: 'bert', attrs: { l: 'Boston', departmentNumber: '12', employeeNumber: '1002' } },
  { uid: 'carl', attrs: { l: 'Berlin' } },
  { uid: 'dora', attrs: { l: 'Boston', employeeNumber: 'E-17' } },
];
const dn = (uid: string): string => `uid=${uid},${PEOPLE}`;

function entries(): LdifEntry[] {
  return [
    { dn: PEOPLE, attrs: { objectClass: 'organizationalUnit', ou: 'people' } },
    ...people.map((p) => ({
      dn: dn(p.uid),
      attrs: { objectClass: 'inetOrgPerson', uid: p.uid, cn: p.uid, sn: p.uid, mail: `${p.uid}@example.org`, ...p.attrs },
    })),
  ];
}

function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((res) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { env: { ...process.env, NO_COLOR: '1' }, timeout: 60_000, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => {
        const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 99) : 0;
        res({ code, stdout, stderr });
      },
    );
  });
}

let sl: SlapdHandle;
let sim: Simulator;
let config: string;
const dir = mkdtempSync(join(tmpdir(), 'ldap-attrs-'));

beforeAll(async () => {
  if (!slapdAvailable()) throw new Error('slapd is required for this test: apt-get install slapd ldap-utils');
  sl = await startSlapd({ entries: entries() });
  sim = await startSimulator();
  writeFileSync(join(dir, 'ldap-password'), `${sl.readerPassword}\n`);
  config = join(dir, 'config.yaml');
  const cfg = {
    tenant: 'e2e',
    platform: { baseUrl: sim.url, token: 'test-token', allowInsecureHttp: true },
    provisioning: {
      source: {
        type: 'ldap',
        url: sl.url,
        allowInsecure: true,
        bindDn: sl.readerDn,
        bindPasswordFile: 'ldap-password',
        timeoutSeconds: 5,
        connectTimeoutSeconds: 2,
        users: {
          baseDn: PEOPLE,
          attributes: {
            extra: { l: 'l', department: 'departmentNumber', categories: 'businessCategory', employeeNumber: 'employeeNumber' },
          },
        },
      },
      userAttributes: [
        { name: 'region', type: 'string', from: 'attributes.l', transform: 'lower' },
        { name: 'department', type: 'string', from: 'attributes.department' },
        { name: 'dataCategories', type: 'string_array', from: 'attributes.categories' },
        { name: 'employeeNo', type: 'number', from: 'attributes.employeeNumber', accessRelevant: false },
      ],
      guards: { maxAttributeClearPercent: 100 },
    },
    state: { dir: join(dir, 'state') },
  };
  writeFileSync(config, JSON.stringify(cfg, null, 2));
});

afterAll(async () => {
  await sim?.close();
  await sl?.stop();
});

function values(uid: string): Record<string, unknown> {
  const u = sim.store.getUserByUserName(uid);
  if (!u) throw new Error(`no platform user ${uid}`);
  return sim.attributes.valuesOf(u.id);
}

describe('LDAP directory attributes → platform user attributes', () => {
  it('apply maps l, departmentNumber, businessCategory and employeeNumber; a non-numeric employeeNumber is rejected', async () => {
    const first = await run(['apply', '--config', config, '--json']);
    expect(first.code, first.stderr).toBe(0);
    const plan = (JSON.parse(first.stdout) as { plan: Plan }).plan;
    expect(values('anna')).toEqual({ region: 'berlin', department: '4711', dataCategories: ['eu-data', 'pii'], employeeNo: 1001 });
    expect(values('bert')).toEqual({ region: 'boston', department: '12', employeeNo: 1002 });
    expect(values('carl')).toEqual({ region: 'berlin' });
    expect(values('dora')).toEqual({ region: 'boston' });
    expect(plan.attributes?.rejected).toEqual([
      {
        externalId: expect.any(String) as unknown as string,
        userName: 'dora',
        attribute: 'employeeNo',
        reason: 'number: "E-17" is not a number',
      },
    ]);
  });

  it('the directory changes (anna moves to Boston, bert loses departmentNumber): one apply updates and clears, then nothing is left to do or read', async () => {
    const admin = new Client({ url: sl.url });
    await admin.bind(sl.adminDn, sl.adminPassword);
    await admin.modify(dn('anna'), new Change({ operation: 'replace', modification: new Attribute({ type: 'l', values: ['Boston'] }) }));
    await admin.modify(
      dn('bert'),
      new Change({ operation: 'delete', modification: new Attribute({ type: 'departmentNumber', values: [] }) }),
    );
    await admin.unbind();

    const second = await run(['apply', '--config', config, '--json']);
    expect(second.code, second.stderr).toBe(0);
    const plan = (JSON.parse(second.stdout) as { plan: Plan }).plan;
    expect(plan.attributes?.movers.map((m) => [m.userName, m.changes])).toEqual([
      ['anna', [{ attribute: 'region', before: 'berlin', after: 'boston' }]],
    ]);
    expect(
      plan.attributes?.users.map((u) => [
        u.userName,
        u.changes.map((c) => `${c.attribute}:${JSON.stringify(c.before)}→${JSON.stringify(c.after)}`),
      ]),
    ).toEqual([
      ['anna', ['region:"berlin"→"boston"']],
      ['bert', ['department:"12"→null']],
    ]);
    expect(values('anna')).toMatchObject({ region: 'boston', department: '4711' });
    expect(values('bert')).toEqual({ region: 'boston', employeeNo: 1002 });

    sim.clearRequests();
    const third = await run(['plan', '--config', config, '--json']);
    expect(third.code, third.stderr).toBe(0);
    expect((JSON.parse(third.stdout) as Plan).summary.changes).toBe(0);
    expect(sim.requests.filter((r) => r.method === 'GET' && r.path.startsWith(VALUES_PATH))).toEqual([]);
  });
});
