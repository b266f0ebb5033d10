/**
 * The generated test directory and what a correct reader must make of it. Everything a test
 * asserts is derived here from the same data, so expectations are computed, not hard-coded.
 */
import { encodeObjectGuid } from '../../src/sources/ldap/guid.ts';
import { escapeDnValue, type LdifEntry } from './ldif.ts';

export const SUFFIX = 'dc=example,dc=org';
export const PEOPLE = `ou=people,${SUFFIX}`;
export const GROUPS = `ou=groups,${SUFFIX}`;

export interface FixtureUser {
  dn: string;
  uid: string;
  cn: string;
  givenName: string;
  sn: string;
  mail: string;
  disabled: boolean;
  department: string;
}

export interface FixtureGroup {
  dn: string;
  cn: string;
  /** uids of the users it must contain after flattening. */
  expectedUids: string[];
}

export interface Fixture {
  entries: LdifEntry[];
  users: FixtureUser[];
  groups: FixtureGroup[];
  /** Member values naming nothing in the user scope. */
  outsideMemberValues: number;
  special: { jose: FixtureUser; zoe: FixtureUser; smith: FixtureUser; hash: FixtureUser };
  /** uids in the posixGroup (memberUid) and the groupOfUniqueNames. */
  posixUids: string[];
  uniqueUids: string[];
  ad: { users: { upn: string; guid: string; disabled: boolean; dn: string }[]; group: { dn: string; guid: string; memberUpns: string[] } };
}

const ou = (name: string, parent = SUFFIX): LdifEntry => ({
  dn: `ou=${name},${parent}`,
  attrs: { objectClass: 'organizationalUnit', ou: name },
});

function person(u: FixtureUser): LdifEntry {
  return {
    dn: u.dn,
    attrs: {
      objectClass: 'inetOrgPerson',
      uid: u.uid,
      cn: u.cn,
      givenName: u.givenName,
      sn: u.sn,
      mail: u.mail,
      departmentNumber: u.department,
      employeeType: u.disabled ? 'disabled' : 'staff',
    },
  };
}

function groupOfNames(cn: string, members: string[], parent = GROUPS): LdifEntry {
  return {
    dn: `cn=${escapeDnValue(cn)},${parent}`,
    attrs: { objectClass: 'groupOfNames', cn, member: members.length ? members : [`cn=nobody,${SUFFIX}`] },
  };
}

export function buildFixture(userCount: number): Fixture {
  const users: FixtureUser[] = [];
  for (let i = 0; i < userCount; i++) {
    const uid = `user${String(i).padStart(5, '0')}`;
    users.push({
      dn: `uid=${uid},${PEOPLE}`,
      uid,
      cn: `User ${i}`,
      givenName: 'User',
      sn: `Number ${i}`,
      mail: `${uid}@example.org`,
      disabled: i % 100 === 7,
      department: `dept-${i % 10}`,
    });
  }
  const mk = (cn: string, uid: string, givenName: string, sn: string, rdn: string): FixtureUser => ({
    dn: `${rdn},${PEOPLE}`,
    uid,
    cn,
    givenName,
    sn,
    mail: `${uid}@example.org`,
    disabled: false,
    department: 'special',
  });
  const jose = mk('José Ñúñez', 'jose', 'José', 'Ñúñez', 'uid=jose');
  const zoe = mk('Zoë Åberg', 'zoe', 'Zoë', 'Åberg', `cn=${escapeDnValue('Zoë Åberg')}`);
  // A comma and a multi-valued RDN: `cn=Smith\, John+uid=jsmith`.
  const smith = mk('Smith, John', 'jsmith', 'John', 'Smith', `cn=${escapeDnValue('Smith, John')}+uid=jsmith`);
  const hash = mk('#1 <Lead>; "Ops"', 'hash', 'Hash', 'Ops', `cn=${escapeDnValue('#1 <Lead>; "Ops"')}`);
  users.push(jose, zoe, smith, hash);

  const entries: LdifEntry[] = [ou('people'), ou('groups'), ou('outsiders'), ou('unique'), ou('posix'), ou('ad'), ou('adgroups')];
  for (const u of users) entries.push(person(u));
  const outsider = `uid=contractor1,ou=outsiders,${SUFFIX}`;
  entries.push({
    dn: outsider,
    attrs: { objectClass: 'inetOrgPerson', uid: 'contractor1', cn: 'Contractor One', sn: 'One', mail: 'c1@example.org' },
  });

  const groups: FixtureGroup[] = [];
  const add = (cn: string, memberDns: string[], expectedUids: string[]): void => {
    entries.push(groupOfNames(cn, memberDns));
    groups.push({ dn: `cn=${escapeDnValue(cn)},${GROUPS}`, cn, expectedUids });
  };
  const dnOf = (uid: string): string => (users.find((u) => u.uid === uid) as FixtureUser).dn;
  const regular = users.slice(0, userCount);
  // Every user: more member values than one search page and than the size limit.
  add(
    'all-staff',
    users.map((u) => u.dn),
    users.map((u) => u.uid),
  );
  for (let t = 0; t < 20; t++) {
    const members = regular.filter((_, i) => i % 20 === t);
    add(
      `team-${String(t).padStart(2, '0')}`,
      members.map((u) => u.dn),
      members.map((u) => u.uid),
    );
  }
  // Nesting with a cycle: a → b → c → a; each ends with the users of all three.
  const [ua, ub, uc, up, uk] = regular.map((u) => u.uid) as [string, string, string, string, string];
  const cyc = (x: string): string => `cn=${x},${GROUPS}`;
  add('cycle-a', [dnOf(ua), cyc('cycle-b')], [ua, ub, uc]);
  add('cycle-b', [dnOf(ub), cyc('cycle-c')], [ua, ub, uc]);
  add('cycle-c', [dnOf(uc), cyc('cycle-a')], [ua, ub, uc]);
  add('parent', [dnOf(up), cyc('child')], [up, uk]);
  add('child', [dnOf(uk)], [uk]);
  // The same people spelled differently (case, \2C escape, RDN order), plus members outside scope.
  const mixed = [
    `UID=jsmith+CN=Smith\\2C John,OU=People,DC=Example,DC=Org`,
    zoe.dn.toUpperCase(),
    `  uid=jose , ou=people , dc=example , dc=org`,
    hash.dn,
    outsider,
    `uid=ghost,${PEOPLE}`,
    `cn=reader,${SUFFIX}`,
  ];
  add('mixed', mixed, ['jsmith', 'zoe', 'jose', 'hash']);
  add('Développeurs', [jose.dn, zoe.dn], ['jose', 'zoe']);

  // groupOfUniqueNames with the optional uid suffix on one value.
  const uniqueUids = [regular[10]!.uid, regular[11]!.uid];
  entries.push({
    dn: `cn=uniq,ou=unique,${SUFFIX}`,
    attrs: { objectClass: 'groupOfUniqueNames', cn: 'uniq', uniqueMember: [regular[10]!.dn, `${regular[11]!.dn}#'0101'B`, outsider] },
  });
  // posixGroup with memberUid (one unknown uid).
  const posixUids = [regular[20]!.uid, regular[21]!.uid];
  entries.push({
    dn: `cn=posix-devs,ou=posix,${SUFFIX}`,
    attrs: { objectClass: 'posixGroup', cn: 'posix-devs', gidNumber: '5000', memberUid: [...posixUids, 'nobody'] },
  });

  // Active Directory-shaped entries (objectGUID binary, userAccountControl, userPrincipalName).
  const adUsers = [0, 1, 2, 3].map((i) => {
    const guid = `0a1b2c3d-4e5f-4071-8293-a4b5c6d7e8f${i}`;
    const upn = `ad.user${i}@corp.example.org`;
    const dn = `cn=AD User ${i},ou=ad,${SUFFIX}`;
    const disabled = i === 2;
    // 512 = NORMAL_ACCOUNT; 514 = NORMAL_ACCOUNT | ACCOUNTDISABLE; 66050 adds DONT_EXPIRE_PASSWORD.
    entries.push({
      dn,
      attrs: {
        objectClass: ['inetOrgPerson', 'adTestObject'],
        cn: `AD User ${i}`,
        sn: `User${i}`,
        givenName: 'AD',
        userPrincipalName: upn,
        sAMAccountName: `aduser${i}`,
        mail: upn,
        objectGUID: encodeObjectGuid(guid),
        userAccountControl: disabled ? '66050' : i === 3 ? '66048' : '512',
      },
    });
    return { upn, guid, disabled, dn };
  });
  const adGroupGuid = 'f0e1d2c3-b4a5-4697-8879-6a5b4c3d2e1f';
  const adGroupDn = `cn=AD Admins,ou=adgroups,${SUFFIX}`;
  entries.push({
    dn: adGroupDn,
    attrs: {
      objectClass: ['groupOfNames', 'adTestObject'],
      cn: 'AD Admins',
      objectGUID: encodeObjectGuid(adGroupGuid),
      member: [adUsers[0]!.dn, adUsers[2]!.dn],
    },
  });

  return {
    entries,
    users,
    groups,
    outsideMemberValues: 3,
    special: { jose, zoe, smith, hash },
    posixUids,
    uniqueUids,
    ad: { users: adUsers, group: { dn: adGroupDn, guid: adGroupGuid, memberUpns: [adUsers[0]!.upn, adUsers[2]!.upn] } },
  };
}
