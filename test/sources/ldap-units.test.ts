import { describe, expect, it } from 'vitest';
import { dnKey, stripOptionalUid, unescapeDnValue } from '../../src/sources/ldap/dn.ts';
import { MembershipResolver, resolveMemberships } from '../../src/sources/ldap/flatten.ts';
import { decodeObjectGuid, encodeObjectGuid } from '../../src/sources/ldap/guid.ts';
import { collectRange, findRangeSlice, parseRangedName, type RangeFetcher } from '../../src/sources/ldap/range.ts';
import { ldapSourceSchema } from '../../src/sources/ldap/schema.ts';
import { resolveLdapSettings } from '../../src/sources/ldap/settings.ts';
import { SourceError } from '../../src/errors.ts';
import { isAdApplicationPartition } from '../../src/sources/ldap/source.ts';

describe('objectGUID', () => {
  it('decodes the mixed-endian layout into the canonical string (known vectors)', () => {
    // The classic example: {3F2504E0-4F89-11D3-9A0C-0305E82C3301} is stored as these bytes.
    const bytes = Buffer.from('E004253F894FD3119A0C0305E82C3301', 'hex');
    expect(decodeObjectGuid(bytes)).toBe('3f2504e0-4f89-11d3-9a0c-0305e82c3301');
    // Byte order made visible: bytes 00..0f.
    const seq = Buffer.from([...Array(16).keys()]);
    expect(decodeObjectGuid(seq)).toBe('03020100-0504-0706-0809-0a0b0c0d0e0f');
  });
  it('round-trips with the encoder and refuses wrong lengths', () => {
    const g = '0a1b2c3d-4e5f-4071-8293-a4b5c6d7e8f9';
    expect(decodeObjectGuid(encodeObjectGuid(g))).toBe(g);
    expect(() => decodeObjectGuid(Buffer.alloc(15))).toThrow(/16 bytes/);
  });
});

describe('DN keys', () => {
  it('treats spelling variants of one DN as equal', () => {
    const a = 'cn=Smith\\, John+uid=jsmith,ou=people,dc=example,dc=org';
    expect(dnKey('UID=jsmith+CN=Smith\\2C John, OU=People,DC=Example, DC=Org')).toBe(dnKey(a));
    expect(dnKey('cn=Zo\\C3\\AB \\C3\\85berg,dc=x')).toBe(dnKey('CN=ZOË ÅBERG,DC=X'));
    expect(dnKey('cn="Smith, John",dc=x')).toBe(dnKey('cn=Smith\\, John,dc=x'));
  });
  it('keys plain DNs (no escapes) exactly as the general parser keys an escaped spelling of them', () => {
    // Each pair: a DN the fast paths key, and the same DN with an escape that forces the parser.
    const pairs: [string, string][] = [
      ['uid=user1,ou=people,dc=example,dc=org', 'uid=user\\31,ou=people,dc=example,dc=org'],
      ['CN=John  Smith , OU=Users,DC=corp,DC=example', 'cn=john smith,ou=users,dc=corp,dc=exampl\\65'],
      ['cn=a=b,dc=x', 'cn=a\\=b,dc=x'],
      ['cn=x,,dc=y, ', 'cn=\\78,dc=y'],
    ];
    for (const [plain, escaped] of pairs) expect(dnKey(plain)).toBe(dnKey(escaped));
    expect(dnKey('uid=user1,ou=people,dc=example,dc=org')).toBe('uid=user1,ou=people,dc=example,dc=org');
    expect(dnKey('cn=a=b,dc=x')).not.toBe(dnKey('cn=a,b=,dc=x'));
  });
  it('keeps different DNs apart', () => {
    expect(dnKey('cn=a\\,b,dc=x')).not.toBe(dnKey('cn=a,cn=b,dc=x'));
    expect(dnKey('cn=a\\+b,dc=x')).not.toBe(dnKey('cn=a+b,dc=x'));
  });
  it('unescapes hex pairs as UTF-8 and strips a uniqueMember uid suffix', () => {
    expect(unescapeDnValue('\\23hash\\3Cx\\3E')).toBe('#hash<x>');
    expect(stripOptionalUid("uid=a,dc=x#'0101'B")).toBe('uid=a,dc=x');
    expect(stripOptionalUid('uid=a,dc=x')).toBe('uid=a,dc=x');
  });
});

describe('AD range retrieval', () => {
  it('parses ranged attribute names', () => {
    expect(parseRangedName('member;range=0-1499')).toEqual({ base: 'member', start: 0, end: 1499 });
    expect(parseRangedName('member;range=1500-*')).toEqual({ base: 'member', start: 1500, end: null });
    expect(parseRangedName('Member;Range=3000-4499')).toEqual({ base: 'Member', start: 3000, end: 4499 });
    expect(parseRangedName('member')).toBeUndefined();
    expect(findRangeSlice({ dn: 'x', 'member;range=0-1': ['a', 'b'] }, 'MEMBER')).toMatchObject({ start: 0, end: 1, values: ['a', 'b'] });
    expect(findRangeSlice({ dn: 'x', member: ['a'] }, 'member')).toBeUndefined();
  });

  /** A directory that serves `total` member values in slices of `max`, like AD's MaxValRange. */
  function server(total: number, max: number, log: string[]): RangeFetcher {
    const all = Array.from({ length: total }, (_, i) => `cn=u${i},dc=x`);
    return async (_dn, desc) => {
      log.push(desc);
      const start = Number(/range=(\d+)-\*/.exec(desc)?.[1]);
      const end = Math.min(start + max - 1, total - 1);
      const last = end === total - 1;
      return { dn: _dn, [`member;range=${start}-${last ? '*' : end}`]: all.slice(start, end + 1) };
    };
  }

  it('follows slices until the range ends in *', async () => {
    const log: string[] = [];
    const fetch = server(4000, 1500, log);
    const first = findRangeSlice((await fetch('g', 'member;range=0-*')) ?? {}, 'member')!;
    log.length = 0;
    const r = await collectRange('g', 'member', first, fetch);
    expect(r.values).toHaveLength(4000);
    expect(new Set(r.values).size).toBe(4000);
    expect(log).toEqual(['member;range=1500-*', 'member;range=3000-*']);
    expect(r.requests).toBe(2);
  });

  it('fails on a gap, a missing slice or a first slice not at 0 — never returns a short list', async () => {
    const gap: RangeFetcher = async () => ({ 'member;range=1600-*': ['x'] });
    await expect(collectRange('g', 'member', { key: 'member;range=0-1499', start: 0, end: 1499, values: [] }, gap)).rejects.toThrow(
      /asked for range 1500-\*, got member;range=1600-\*/,
    );
    const none: RangeFetcher = async () => ({ member: ['x'] });
    await expect(collectRange('g', 'member', { key: 'k', start: 0, end: 1, values: [] }, none)).rejects.toBeInstanceOf(SourceError);
    const gone: RangeFetcher = async () => undefined;
    await expect(collectRange('g', 'member', { key: 'k', start: 0, end: 1, values: [] }, gone)).rejects.toThrow(/disappeared/);
    await expect(collectRange('g', 'member', { key: 'k', start: 5, end: null, values: [] }, gone)).rejects.toThrow(/starts at 5/);
  });

  it('bounds the number of requests', async () => {
    let n = 0;
    const endless: RangeFetcher = async (_dn, desc) => {
      const start = Number(/range=(\d+)/.exec(desc)?.[1]);
      n++;
      return { [`member;range=${start}-${start}`]: ['x'] };
    };
    await expect(collectRange('g', 'member', { key: 'k', start: 0, end: 0, values: [] }, endless, 5)).rejects.toThrow(/gave up after 5/);
    expect(n).toBe(5);
  });
});

describe('membership flattening', () => {
  const users = new Map([
    ['uid=a,dc=x', 'A'],
    ['uid=b,dc=x', 'B'],
    ['uid=c,dc=x', 'C'],
  ]);
  const g = (name: string, members: string[]) => ({ dn: `cn=${name},dc=x`, externalId: name, displayName: name, memberValues: members });
  const base = {
    userByDn: users,
    userByUid: new Map<string, string>(),
    rejectedUserDns: new Set(['uid=r,dc=x']),
    memberAttribute: 'member' as const,
  };

  it('flattens nesting, cuts cycles and counts what it skipped', () => {
    const groups = [
      g('x', ['uid=a,dc=x', 'cn=y,dc=x']),
      g('y', ['uid=b,dc=x', 'cn=z,dc=x']),
      g('z', ['uid=c,dc=x', 'cn=x,dc=x', 'uid=out,dc=x', 'uid=r,dc=x']),
      g('solo', ['cn=y,dc=x']),
    ];
    const r = resolveMemberships({ ...base, groups, flattenNested: true });
    const byName = Object.fromEntries(r.groups.map((x) => [x.displayName, [...x.members].sort()]));
    expect(byName).toEqual({ x: ['A', 'B', 'C'], y: ['A', 'B', 'C'], z: ['A', 'B', 'C'], solo: ['A', 'B', 'C'] });
    expect(r.stats).toEqual({ membersOutsideScope: 1, membersRejected: 1, nestedGroupsIgnored: 0, groupsInCycles: 3 });
  });

  it('resolves members added later (range slices) into the same group, nested groups read after their parent too', () => {
    const resolver = new MembershipResolver({ ...base, flattenNested: true });
    const x = resolver.add(g('x', ['uid=a,dc=x']));
    resolver.add(g('y', ['uid=c,dc=x']));
    resolver.addMembers(x, ['UID=B, DC=X', 'cn=y,dc=x', 'uid=out,dc=x']);
    const r = resolver.finish();
    expect(r.groups.map((k) => [k.displayName, [...k.members].sort()])).toEqual([
      ['x', ['A', 'B', 'C']],
      ['y', ['C']],
    ]);
    expect(r.stats.membersOutsideScope).toBe(1);
  });

  it('without flattening keeps direct users only and counts nested references', () => {
    const r = resolveMemberships({ ...base, groups: [g('x', ['uid=a,dc=x', 'cn=y,dc=x']), g('y', ['uid=b,dc=x'])], flattenNested: false });
    expect(r.groups.map((x) => x.members)).toEqual([['A'], ['B']]);
    expect(r.stats.nestedGroupsIgnored).toBe(1);
  });
});

describe('config and presets', () => {
  const minimal = {
    type: 'ldap',
    url: 'ldaps://dc1.corp.example.com',
    bindDn: 'CN=svc,DC=corp',
    bindPassword: 'x',
    users: { baseDn: 'DC=corp' },
    groups: { baseDn: 'OU=Groups,DC=corp' },
  };

  it('a few lines of config pick up the vendor preset', () => {
    const s = resolveLdapSettings(ldapSourceSchema.parse({ ...minimal, preset: 'active-directory' }));
    expect(s.userMap).toMatchObject({ externalId: 'objectGUID', externalIdFormat: 'guid', userName: 'userPrincipalName' });
    expect(s.disabled).toEqual({ userAccountControl: true });
    expect(s.rangeRetrieval).toBe(true);
    expect(s.users.attributes).toEqual(expect.arrayContaining(['objectGUID', 'userAccountControl', 'mail']));
    expect(s.binaryAttributes).toEqual(['objectGUID']);
    const ipa = resolveLdapSettings(ldapSourceSchema.parse({ ...minimal, preset: 'freeipa' }));
    expect(ipa.disabled).toEqual({ attribute: 'nsAccountLock', values: ['TRUE'] });
    expect(ipa.users.attributes).toContain('nsAccountLock');
  });

  it('overrides win over the preset; a custom id attribute is a string', () => {
    const s = resolveLdapSettings(
      ldapSourceSchema.parse({
        ...minimal,
        preset: 'active-directory',
        users: { baseDn: ['OU=A,DC=corp', 'OU=B,DC=corp'], attributes: { externalId: 'employeeID', userName: 'sAMAccountName' } },
      }),
    );
    expect(s.userMap.externalIdFormat).toBe('string');
    expect(s.userMap.userName).toBe('sAMAccountName');
    expect(s.users.baseDns).toEqual(['OU=A,DC=corp', 'OU=B,DC=corp']);
  });

  it('refuses unsafe or contradictory settings with messages naming the fix', () => {
    const issues = (input: unknown): string[] => {
      const r = ldapSourceSchema.safeParse(input);
      return r.success ? [] : r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    };
    expect(issues({ ...minimal, url: 'ldap://dc1' }).join()).toMatch(/url: ldap:\/\/ without TLS/);
    expect(issues({ ...minimal, url: 'ldap://dc1', startTls: true })).toEqual([]);
    expect(issues({ ...minimal, startTls: true }).join()).toMatch(/startTls: startTls is for ldap:\/\//);
    expect(issues({ ...minimal, bindPasswordFile: '/run/x' }).join()).toMatch(/exactly one of bindPassword/);
    expect(issues({ ...minimal, url: 'http://dc1' }).join()).toMatch(/ldaps:\/\/host/);
  });
});

describe('search references (referrals)', () => {
  it("AD's application and configuration partitions are not reported; any other referral is", () => {
    expect(isAdApplicationPartition('ldap://DomainDnsZones.corp.example.com/DC=DomainDnsZones,DC=corp,DC=example,DC=com')).toBe(true);
    expect(isAdApplicationPartition('ldap://ForestDnsZones.corp.example.com/DC=ForestDnsZones,DC=corp,DC=example,DC=com')).toBe(true);
    expect(isAdApplicationPartition('ldap://corp.example.com/CN=Configuration,DC=corp,DC=example,DC=com')).toBe(true);
    expect(isAdApplicationPartition('ldap://emea.corp.example.com/DC=emea,DC=corp,DC=example,DC=com')).toBe(false);
    expect(isAdApplicationPartition('ldap://other.example.org/OU=People,DC=other,DC=example,DC=org')).toBe(false);
  });
});

describe('LDAP errors keep the server explanation and say what to change', () => {
  it('adminLimitExceeded on a paged search names the page size and how to lower it, with the server text', async () => {
    const { AdminLimitExceededError, InvalidCredentialsError } = await import('ldapts');
    const { ldapError } = await import('../../src/sources/ldap/classify.ts');
    const ctx = {
      url: 'ldaps://dc1.corp.example:636',
      bindDn: 'CN=svc-scim,OU=Service,DC=corp,DC=example',
      timeoutSeconds: 120,
      connectTimeoutSeconds: 10,
      pageSize: 5000,
      what: 'users under OU=Staff,DC=corp,DC=example',
    };
    const limit = ldapError(
      new AdminLimitExceededError('00002024: LdapErr: DSID-0C0909A3, comment: Size of the page exceeds MaxPageSize'),
      'search',
      ctx,
    );
    expect(limit.message).toBe(
      'LDAP search of users under OU=Staff,DC=corp,DC=example failed: administrative limit exceeded (11); the server said: "00002024: LdapErr: DSID-0C0909A3, comment: Size of the page exceeds MaxPageSize": the page size (provisioning.source.pageSize: 5000) is above the server\'s limit (Active Directory MaxPageSize, 1000 by default; OpenLDAP limits size.pr); lower provisioning.source.pageSize',
    );
    expect(limit.code).toBe('E_SOURCE_FAILED');
    const creds = ldapError(
      new InvalidCredentialsError('80090308: LdapErr: DSID-0C090439, comment: AcceptSecurityContext error, data 52e, v4563'),
      'bind',
      ctx,
    );
    expect(creds.code).toBe('E_AUTH_INVALID');
    expect(creds.message).toContain(
      'invalid credentials (49); the server said: "80090308: LdapErr: DSID-0C090439, comment: AcceptSecurityContext error, data 52e, v4563": check provisioning.source.bindDn',
    );
  });
});
