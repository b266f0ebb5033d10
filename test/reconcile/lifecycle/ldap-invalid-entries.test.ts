/**
 * An LDAP directory edit that leaves a person's entry invalid (`mail: cleo@@ldap`, `mail: kurt at
 * ldap.example`, a right-to-left override in `cn`) on real slapd: the entry is rejected with the
 * same reason the file source gives for the same value, the plan sends no update with the bad
 * value, and the person's account is protected (present but invalid), never deprovisioned.
 */
import { Attribute, Change, Client } from 'ldapts';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Simulator } from '../../../src/simulator/index.ts';
import { normalizeDocument } from '../../../src/sources/file/normalize.ts';
import { createWorkspace, startSim, writeRequests, type Workspace } from '../../helpers/reconcile-harness.ts';
import type { LdifEntry } from '../../helpers/ldif.ts';
import { startSlapd, type SlapdHandle } from '../../helpers/slapd.ts';
import { apply, expectConverged, users } from './support.ts';

const SUFFIX = 'dc=example,dc=org';
const PEOPLE = `ou=people,${SUFFIX}`;
const PEOPLE_UIDS = ['ada', 'cleo', 'kurt', 'eve'];

let slapd: SlapdHandle;
let sim: Simulator;
let ws: Workspace;

const dn = (uid: string): string => `uid=${uid},${PEOPLE}`;

async function modify(uid: string, attr: string, value: string): Promise<void> {
  const c = new Client({ url: slapd.url });
  try {
    await c.bind(slapd.adminDn, slapd.adminPassword);
    await c.modify(dn(uid), [new Change({ operation: 'replace', modification: new Attribute({ type: attr, values: [value] }) })]);
  } finally {
    await c.unbind();
  }
}

/** The reason the file source gives for the same user with `over` applied. */
function fileReason(uid: string, over: Record<string, unknown>): string | undefined {
  const entry = {
    externalId: 'x',
    userName: uid,
    givenName: uid,
    familyName: 'Person',
    displayName: `${uid} Person`,
    emails: [`${uid}@example.org`],
    ...over,
  };
  return normalizeDocument([entry], []).rejected[0]?.reason;
}

beforeAll(async () => {
  const entries: LdifEntry[] = [
    { dn: PEOPLE, attrs: { objectClass: 'organizationalUnit', ou: 'people' } },
    ...PEOPLE_UIDS.map((uid) => ({
      dn: dn(uid),
      attrs: { objectClass: 'inetOrgPerson', uid, cn: `${uid} Person`, givenName: uid, sn: 'Person', mail: `${uid}@example.org` },
    })),
  ];
  slapd = await startSlapd({ entries, suffix: SUFFIX });
  sim = await startSim();
  ws = createWorkspace(sim, { directory: { users: [], groups: [] } });
  ws.writeConfigText(
    stringify({
      tenant: 'e2e',
      platform: {
        baseUrl: '${SIM_URL}',
        token: '${SIM_TOKEN}',
        allowInsecureHttp: true,
        timeoutSeconds: 10,
        retry: { maxAttempts: 4, baseDelayMs: 20, maxDelayMs: 200 },
      },
      provisioning: {
        source: {
          type: 'ldap',
          url: slapd.url,
          allowInsecure: true,
          bindDn: slapd.readerDn,
          bindPassword: slapd.readerPassword,
          timeoutSeconds: 10,
          users: { baseDn: PEOPLE },
        },
      },
      state: { dir: 'state' },
      logging: { level: 'warn' },
    }),
  );
}, 60_000);

afterAll(async () => {
  await Promise.all([slapd?.stop(), sim?.close()]);
});

describe('LDAP entries made invalid in the directory', () => {
  it('bad mail values and a bidi override are rejected with the file source reasons; the accounts are protected, not updated', async () => {
    await apply(ws);
    expect(users(sim)).toHaveLength(4);
    const before = Object.fromEntries(sim.store.users().map((u) => [u.userName, u.emails?.map((e) => e.value)]));

    await modify('cleo', 'mail', 'cleo@@ldap');
    await modify('kurt', 'mail', 'kurt at ldap.example');
    await modify('eve', 'cn', 'eve\u202EPerson');
    sim.clearRequests();
    const run = await apply(ws);

    const reasons = Object.fromEntries(run.plan.rejected.map((r) => [r.userName, r.reason]));
    expect(reasons).toEqual({
      cleo: fileReason('cleo', { emails: ['cleo@@ldap'] }),
      kurt: fileReason('kurt', { emails: ['kurt at ldap.example'] }),
      eve: fileReason('eve', { displayName: 'eve\u202EPerson' }),
    });
    expect(reasons['cleo']).toBe('emails "cleo@@ldap": not an e-mail address (more than one @); expected one like alice@example.com');
    expect(run.plan.rejected.map((r) => r.dn).sort()).toEqual([dn('cleo'), dn('eve'), dn('kurt')].sort());
    expect(run.plan.users.update).toEqual([]);
    expect(run.plan.users.deactivate).toEqual([]);
    expect(run.plan.protected.map((p) => p.name).sort()).toEqual(['cleo', 'eve', 'kurt']);
    expect(writeRequests(sim)).toEqual([]);
    expect(Object.fromEntries(sim.store.users().map((u) => [u.userName, u.emails?.map((e) => e.value)]))).toEqual(before);
    await expectConverged(ws);
  });
});
