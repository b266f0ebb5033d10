/**
 * Present but unread: a search reference (referral) the LDAP source does not follow is
 * reported as a rejection without identity, so the planner holds the deprovisioning of
 * anyone who could live under it (docs/reconcile.md, "Present but invalid").
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isUnidentified } from '../../src/identity/model.ts';
import { ldapSourceSchema } from '../../src/sources/ldap/schema.ts';
import { LdapSource } from '../../src/sources/ldap/source.ts';
import { buildFixture, GROUPS, PEOPLE } from '../helpers/ldap-fixture.ts';
import { AD_TEST_SCHEMA, startSlapd, type SlapdHandle } from '../helpers/slapd.ts';

const REFERRAL = 'ldap://emea.example.net/ou=people,dc=emea,dc=example,dc=net';
let sl: SlapdHandle;

beforeAll(async () => {
  const fx = buildFixture(120);
  const referral = { dn: `ou=emea,${PEOPLE}`, attrs: { objectClass: ['referral', 'extensibleObject'], ou: 'emea', ref: REFERRAL } };
  sl = await startSlapd({ entries: [...fx.entries, referral], schema: AD_TEST_SCHEMA });
});
afterAll(async () => {
  await sl?.stop();
});

describe('LDAP referrals', () => {
  it('a referral under the user base is a rejection without identity; everyone else is read', async () => {
    const source = new LdapSource(
      ldapSourceSchema.parse({
        type: 'ldap',
        url: sl.url,
        allowInsecure: true,
        bindDn: sl.readerDn,
        bindPassword: sl.readerPassword,
        users: { baseDn: PEOPLE },
        groups: { baseDn: GROUPS },
      }),
      { configDir: mkdtempSync(join(tmpdir(), 'ldap-ref-')) },
    );
    const state = await source.read();
    expect(state.users.length).toBeGreaterThanOrEqual(120);
    expect(state.stats['referencesIgnored']).toBe(1);
    // slapd adds the scope to the URI it returns.
    const refs = state.rejected.filter((r) => r.ref.startsWith('ldap://'));
    expect(refs).toEqual([
      {
        kind: 'user',
        ref: `${REFERRAL}??sub`,
        reason: expect.stringContaining('search reference (referral) returned by the search of users'),
      },
    ]);
    expect(refs.every(isUnidentified)).toBe(true);
  });
});
