/**
 * The LDAP source against a real slapd started by the test (temp dir, free port, LDIF loaded
 * with slapadd). The bind account is capped at 1,000 entries per unpaged search, so reading
 * 2,604 users proves that paging is used and works.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Client } from 'ldapts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DesiredState } from '../../src/identity/model.ts';
import { SourceError } from '../../src/errors.ts';
import { ldapSourceSchema, type LdapSourceInput } from '../../src/sources/ldap/schema.ts';
import { LdapSource } from '../../src/sources/ldap/source.ts';
import { buildFixture, GROUPS, PEOPLE, SUFFIX, type Fixture } from '../helpers/ldap-fixture.ts';
import { AD_TEST_SCHEMA, slapdSourceConfig, startSlapd, type SlapdHandle } from '../helpers/slapd.ts';

const USERS = 2600;
let sl: SlapdHandle;
let fx: Fixture;
let baseCfg: LdapSourceInput;
let state: DesiredState;
const dir = mkdtempSync(join(tmpdir(), 'ldap-src-'));

const source = (over: Partial<LdapSourceInput> = {}): LdapSource =>
  new LdapSource(ldapSourceSchema.parse({ ...baseCfg, ...over }), { configDir: dir });

beforeAll(async () => {
  fx = buildFixture(USERS);
  sl = await startSlapd({ entries: fx.entries, tls: true, schema: AD_TEST_SCHEMA, sizeLimit: 1000 });
  baseCfg = slapdSourceConfig(
    sl,
    { people: PEOPLE, groups: GROUPS },
    { pageSize: 250, users: { baseDn: PEOPLE, attributes: { extra: { department: 'departmentNumber' } } } },
  );
  state = await source().read();
});

afterAll(async () => {
  await sl?.stop();
});

const uidOf = (s: DesiredState): Map<string, string> => new Map(s.users.map((u) => [u.externalId, u.userName]));

describe('LDAP source against slapd', () => {
  it('an unpaged search is capped by the server, so paging is what reads everything', async () => {
    const c = new Client({ url: sl.url });
    await c.bind(sl.readerDn, sl.readerPassword);
    await expect(c.search(PEOPLE, { filter: '(objectClass=inetOrgPerson)', attributes: ['uid'] })).rejects.toMatchObject({
      name: 'SizeLimitExceededError',
      code: 4,
    });
    await c.unbind();

    expect(state.users).toHaveLength(fx.users.length);
    expect(fx.users.length).toBeGreaterThan(2500);
    expect(new Set(state.users.map((u) => u.userName))).toEqual(new Set(fx.users.map((u) => u.uid)));
    expect(state.stats['ldapPages']).toBeGreaterThanOrEqual(Math.ceil(fx.users.length / 250));
    expect(state.rejected).toEqual([]);
  });

  it('maps attributes, stable entryUUID ids and disabled accounts', async () => {
    const u = state.users.find((x) => x.userName === 'user00042')!;
    expect(u).toMatchObject({
      givenName: 'User',
      familyName: 'Number 42',
      displayName: 'User 42',
      emails: ['user00042@example.org'],
      active: true,
    });
    expect(u.attributes).toMatchObject({ department: 'dept-2', dn: `uid=user00042,${PEOPLE}` });
    expect(u.externalId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    const disabled = new Set(state.users.filter((x) => !x.active).map((x) => x.userName));
    expect(disabled).toEqual(new Set(fx.users.filter((x) => x.disabled).map((x) => x.uid)));
    expect(state.stats['usersDisabled']).toBe(disabled.size);
    // A second read gives the same ids (what makes updates, not re-creates).
    const again = await source().read();
    expect(uidOf(again)).toEqual(uidOf(state));
  });

  it('a disabled filter gives the same verdicts as the disabled attribute', async () => {
    const viaFilter = await source({ disabled: { filter: '(employeeType=disabled)' } }).read();
    expect(
      viaFilter.users
        .filter((u) => !u.active)
        .map((u) => u.userName)
        .sort(),
    ).toEqual(
      state.users
        .filter((u) => !u.active)
        .map((u) => u.userName)
        .sort(),
    );
  });

  it('reads non-ASCII names and DNs with escaped characters', () => {
    const zoe = state.users.find((u) => u.userName === 'zoe')!;
    expect(zoe).toMatchObject({ givenName: 'Zoë', familyName: 'Åberg', displayName: 'Zoë Åberg' });
    expect(state.users.find((u) => u.userName === 'jose')?.displayName).toBe('José Ñúñez');
    expect(state.users.find((u) => u.userName === 'jsmith')?.displayName).toBe('Smith, John');
    expect(state.users.find((u) => u.userName === 'hash')?.displayName).toBe('#1 <Lead>; "Ops"');
    expect(state.groups.find((g) => g.displayName === 'Développeurs')).toBeDefined();
  });

  it('resolves every group exactly: large, nested with a cycle, differently spelled member DNs', () => {
    const names = uidOf(state);
    const actual = Object.fromEntries(state.groups.map((g) => [g.displayName, g.members.map((m) => names.get(m)).sort()]));
    const expected = Object.fromEntries(fx.groups.map((g) => [g.cn, [...g.expectedUids].sort()]));
    expect(actual).toEqual(expected);
    expect(actual['all-staff']).toHaveLength(fx.users.length); // more member values than one page
    expect(state.stats['groupsInCycles']).toBe(3);
    expect(state.stats['membersOutsideScope']).toBe(fx.outsideMemberValues);
  });

  it('without flattening, nested groups are not expanded and are counted', async () => {
    const s = await source({ membership: { flattenNested: false } }).read();
    const names = uidOf(s);
    const parent = s.groups.find((g) => g.displayName === 'parent')!;
    const fxParent = fx.groups.find((g) => g.cn === 'parent')!.expectedUids;
    const fxChild = fx.groups.find((g) => g.cn === 'child')!.expectedUids;
    expect(parent.members.map((m) => names.get(m))).toEqual(fxParent.filter((u) => !fxChild.includes(u)));
    // cycle-a → b, b → c, c → a, parent → child
    expect(s.stats['nestedGroupsIgnored']).toBe(4);
  });

  it('uniqueMember and memberUid membership', async () => {
    const uniq = await source({ groups: { baseDn: `ou=unique,${SUFFIX}` }, membership: { attribute: 'uniqueMember' } }).read();
    expect(uniq.groups[0]!.members.map((m) => uidOf(uniq).get(m)).sort()).toEqual(fx.uniqueUids);
    expect(uniq.stats['membersOutsideScope']).toBe(1);
    const posix = await source({
      groups: { baseDn: `ou=posix,${SUFFIX}`, filter: '(objectClass=posixGroup)' },
      membership: { attribute: 'memberUid' },
    }).read();
    expect(posix.groups[0]!.members.map((m) => uidOf(posix).get(m)).sort()).toEqual(fx.posixUids);
    expect(posix.stats['membersOutsideScope']).toBe(1);
  });

  it('the active-directory preset: objectGUID decoded, userAccountControl bit 2, range path without ranges', async () => {
    const ad = await source({
      preset: 'active-directory',
      disabled: undefined,
      users: { baseDn: `ou=ad,${SUFFIX}`, filter: '(objectClass=adTestObject)' },
      groups: { baseDn: `ou=adgroups,${SUFFIX}`, filter: '(objectClass=adTestObject)' },
    }).read();
    expect(ad.users.map((u) => [u.userName, u.externalId, u.active])).toEqual(fx.ad.users.map((u) => [u.upn, u.guid, !u.disabled]));
    expect(ad.groups).toEqual([
      {
        externalId: fx.ad.group.guid,
        displayName: 'AD Admins',
        members: fx.ad.users.filter((u) => fx.ad.group.memberUpns.includes(u.upn)).map((u) => u.guid),
      },
    ]);
    expect(ad.stats['rangeRequests']).toBe(0);
  });

  it('StartTLS and ldaps:// with the test CA; a certificate from an unknown CA is refused', async () => {
    expect(await source({ allowInsecure: false, startTls: true, caFile: sl.caFile }).check()).toMatch(
      /^bound to ldap:\/\/127\.0\.0\.1:\d+ as cn=reader/,
    );
    const viaLdaps = await source({ url: sl.ldapsUrl, allowInsecure: false, caFile: sl.caFile }).read();
    expect(viaLdaps.users).toHaveLength(state.users.length);
    await expect(source({ allowInsecure: false, startTls: true }).check()).rejects.toThrow(
      /^TLS with ldap:\/\/127\.0\.0\.1:\d+ failed: (SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT_LOCALLY)/,
    );
  });

  it('a wrong password fails loudly with the bind DN and the LDAP code, never the password; it is a refused credential (E_AUTH_INVALID, exit 2)', async () => {
    const err = await source({ bindPassword: 'not-the-password' })
      .read()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SourceError);
    expect((err as SourceError).message).toBe(
      `LDAP bind failed for ${sl.readerDn}: invalid credentials (49): check provisioning.source.bindDn and bindPassword / bindPasswordFile`,
    );
    expect((err as SourceError).code).toBe('E_AUTH_INVALID');
    expect(JSON.stringify((err as SourceError).toJSON())).not.toContain('not-the-password');
  });

  it('an unreachable server and a wrong base DN fail loudly', async () => {
    await expect(source({ url: 'ldap://127.0.0.1:1' }).read()).rejects.toThrow('cannot connect to ldap://127.0.0.1:1: ECONNREFUSED');
    await expect(source({ users: { baseDn: `ou=nope,${SUFFIX}` } }).read()).rejects.toThrow(
      `LDAP search of users under ou=nope,${SUFFIX} failed: no such object (32): check the base DN`,
    );
  });

  it('a server that accepts but never answers hits the operation timeout', async () => {
    const silent = createServer((sock) => sock.on('error', () => undefined));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()));
    const port = (silent.address() as AddressInfo).port;
    const started = Date.now();
    try {
      await expect(source({ url: `ldap://127.0.0.1:${port}`, timeoutSeconds: 0.3 }).read()).rejects.toThrow(
        `LDAP bind on ldap://127.0.0.1:${port} timed out after 0.3s`,
      );
      expect(Date.now() - started).toBeLessThan(5000);
    } finally {
      silent.close();
    }
  });

  it('an empty user search is an error unless allowed', async () => {
    await expect(source({ users: { baseDn: PEOPLE, filter: '(uid=nobody-here)' } }).read()).rejects.toThrow(
      /returned no usable users.*allowEmpty/,
    );
    const empty = await source({ allowEmpty: true, users: { baseDn: PEOPLE, filter: '(uid=nobody-here)' } }).read();
    expect(empty.users).toEqual([]);
  });

  it('users without a required attribute are rejected with their DN, the others still read', async () => {
    const s = await source({
      users: { baseDn: SUFFIX, filter: '(|(objectClass=inetOrgPerson)(cn=reader))', attributes: { userName: 'mail' } },
      groups: undefined,
    }).read();
    // cn=reader is a person without mail: rejected, not dropped; everyone else is read.
    expect(s.users.length).toBeGreaterThan(fx.users.length);
    // With the identity still readable (its entryUUID) so the planner protects its account.
    expect(s.rejected).toContainEqual({
      kind: 'user',
      ref: sl.readerDn,
      reason: 'missing mail (userName)',
      dn: sl.readerDn,
      externalId: expect.any(String),
    });
  });

  it('check() binds and runs a one-entry search; reads the password from a file', async () => {
    const pw = join(dir, 'ldap-password');
    writeFileSync(pw, `${sl.readerPassword}\n`);
    expect(await source({ bindPassword: undefined, bindPasswordFile: 'ldap-password' }).check()).toContain(`as ${sl.readerDn}`);
    await expect(source({ users: { baseDn: PEOPLE, filter: '(uid=nobody-here)' } }).check()).rejects.toThrow(/found no entries/);
  });

  it('an aborted read stops with the abort reason', async () => {
    const ac = new AbortController();
    const p = source().read(ac.signal);
    ac.abort(new Error('shutting down'));
    await expect(p).rejects.toThrow('shutting down');
  });
});
