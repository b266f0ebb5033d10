/**
 * The change stream with LDAP (modifyTimestamp polling against a real slapd): a joiner added to
 * the people OU reaches the platform through the daemon's change path, without a full
 * reconcile; a leaver disabled in LDAP is deactivated the same way.
 */
import { Client } from 'ldapts';
import { afterEach, describe, expect, it } from 'vitest';
import { daemonSharedConfig, tenantConfig, waitFor } from '../helpers/daemon-harness.ts';
import { slapdSourceConfig, startSlapd, type SlapdHandle } from '../helpers/slapd.ts';
import type { LdifEntry } from '../helpers/ldif.ts';
import { closingAfterEach, runsFinished } from './support.ts';
import { Attribute, Change } from 'ldapts';

const TOKEN = 'change-stream-ldap-token-93be';
const SUFFIX = 'dc=example,dc=org';
const PEOPLE = `ou=people,${SUFFIX}`;
const GROUPS = `ou=groups,${SUFFIX}`;
const dn = (uid: string): string => `uid=${uid},${PEOPLE}`;
const person = (uid: string): LdifEntry => ({
  dn: dn(uid),
  attrs: { objectClass: 'inetOrgPerson', uid, cn: `${uid} person`, sn: uid, mail: `${uid}@example.org`, employeeType: 'staff' },
});

const { sim, workspace } = closingAfterEach();
let sl: SlapdHandle | undefined;
let admin: Client | undefined;
afterEach(async () => {
  await admin?.unbind().catch(() => undefined);
  await sl?.stop();
  sl = undefined;
  admin = undefined;
});

describe('change stream from LDAP', () => {
  it('a joiner added and a leaver disabled in LDAP reach the platform through the change stream', { timeout: 90_000 }, async () => {
    sl = await startSlapd({
      entries: [
        { dn: PEOPLE, attrs: { objectClass: 'organizationalUnit', ou: 'people' } },
        { dn: GROUPS, attrs: { objectClass: 'organizationalUnit', ou: 'groups' } },
        person('alice'),
        person('bob'),
      ],
    });
    admin = new Client({ url: sl.url });
    await admin.bind(sl.adminDn, sl.adminPassword);
    const s = await sim(TOKEN);
    const ws = workspace({ SIM_URL: s.url, SIM_TOKEN: TOKEN, LDAP_PASSWORD: sl.readerPassword });
    ws.writeConfigObject({
      ...daemonSharedConfig(ws),
      ...tenantConfig('acme'),
      provisioning: {
        source: slapdSourceConfig(
          sl,
          { people: PEOPLE, groups: GROUPS },
          { bindPassword: '${LDAP_PASSWORD}', changes: { overlapSeconds: 2 } },
        ),
        changes: { enabled: true, pollIntervalMs: 300, coalesceMs: 100 },
        // Three people: one leaver is a third of them, over the default percentage.
        guards: { maxDeletePercent: 50 },
      },
    });
    const d = await ws.spawnDaemon();
    await waitFor(() => runsFinished([d], 'reconcile').length === 1 && s.store.users().length === 2, 'the first full reconcile', 30_000);
    await admin.add(dn('erin'), {
      objectClass: 'inetOrgPerson',
      uid: 'erin',
      cn: 'Erin Joiner',
      sn: 'Joiner',
      mail: 'erin@example.org',
      employeeType: 'staff',
    });
    await waitFor(() => s.store.users().some((u) => u.userName === 'erin'), 'the LDAP joiner on the platform', 20_000);
    await admin.modify(dn('bob'), [
      new Change({ operation: 'replace', modification: new Attribute({ type: 'employeeType', values: ['disabled'] }) }),
    ]);
    await waitFor(() => s.store.users().find((u) => u.userName === 'bob')?.active === false, 'the leaver deactivated', 20_000);
    // Logged once the batch's cursor is saved, just after the platform acknowledged it.
    await waitFor(
      () => d.logs.filter((l) => l.msg === 'change stream: changes applied').length >= 2,
      'both batches applied by the change path',
    );
    // The change path alone: still the one full reconcile of the first answer.
    expect(runsFinished([d], 'reconcile')).toHaveLength(1);
  });
});
