/**
 * The change benchmark's directory in a Samba AD domain controller (test/helpers/samba-ad.ts):
 * the same shape as bench/lib/ldap-directory.ts (every user in two groups, 5 large groups of a
 * tenth of the users), as AD objects: users `CN=user<i>,OU=Staff` (sAMAccountName user<i>,
 * userPrincipalName user<i>@test.example, enabled without a password: userAccountControl
 * 0x220) and global security groups `CN=group<g>,OU=App Groups`. A DC's LDAP service is the
 * only way in while it runs, so the load goes over LDAP, several connections at once. Ids are
 * objectGUIDs the DC assigns: read back after the load.
 */
import { Client } from 'ldapts';
import { decodeObjectGuid } from '../../src/sources/ldap/guid.ts';
import type { SambaAdHandle } from '../../test/helpers/samba-ad.ts';
import { groupMembers } from './ldap-directory.ts';

/** NORMAL_ACCOUNT | PASSWD_NOTREQD: enabled, and created without unicodePwd (no ldaps needed). */
export const UAC_ENABLED = 0x200 | 0x20;
export const UAC_DISABLED = UAC_ENABLED | 0x2;
const GLOBAL_SECURITY_GROUP = String(-2147483646);

export interface SambaDirectory {
  staff: string;
  groupsOu: string;
  realm: string;
  userDn(name: string): string;
  groupDn(g: number): string;
  /** objectGUID (canonical text) of user i / group g. */
  userGuid: string[];
  groupGuid: string[];
}

export function sambaLayout(ad: SambaAdHandle): Omit<SambaDirectory, 'userGuid' | 'groupGuid'> {
  const staff = `OU=Staff,${ad.baseDn}`;
  const groupsOu = `OU=App Groups,${ad.baseDn}`;
  const realm = ad.baseDn.replace(/DC=/gi, '').replace(/,/g, '.').toLowerCase();
  return { staff, groupsOu, realm, userDn: (name) => `CN=${name},${staff}`, groupDn: (g) => `CN=group${g},${groupsOu}` };
}

export function sambaUser(name: string, i: number, realm: string): Record<string, string | string[]> {
  return {
    objectClass: ['top', 'person', 'organizationalPerson', 'user'],
    sAMAccountName: name,
    userPrincipalName: `${name}@${realm}`,
    givenName: 'User',
    sn: `N${i}`,
    displayName: `User ${i}`,
    mail: `${name}@${realm}`,
    department: `d${i % 50}`,
    userAccountControl: String(UAC_ENABLED),
  };
}

async function guids(c: Client, base: string, filter: string): Promise<Map<string, string>> {
  const { searchEntries } = await c.search(base, {
    scope: 'one',
    filter,
    attributes: ['cn', 'objectGUID'],
    explicitBufferAttributes: ['objectGUID'],
    paged: { pageSize: 1000 },
  });
  const out = new Map<string, string>();
  for (const e of searchEntries) out.set(String(e['cn']), decodeObjectGuid(e['objectGUID'] as Buffer));
  return out;
}

export async function loadSambaDirectory(ad: SambaAdHandle, users: number, groups: number, connections = 4): Promise<SambaDirectory> {
  const layout = sambaLayout(ad);
  const clients = await Promise.all(
    Array.from({ length: connections }, async () => {
      const c = new Client({ url: ad.url, timeout: 120_000 });
      await c.bind(ad.adminDn, ad.adminPassword);
      return c;
    }),
  );
  try {
    const [first] = clients as [Client];
    await first.add(layout.staff, { objectClass: ['top', 'organizationalUnit'], ou: 'Staff' });
    await first.add(layout.groupsOu, { objectClass: ['top', 'organizationalUnit'], ou: 'App Groups' });
    let next = 0;
    await Promise.all(
      clients.map(async (c) => {
        for (let i = next++; i < users; i = next++) await c.add(layout.userDn(`user${i}`), sambaUser(`user${i}`, i, layout.realm));
      }),
    );
    next = 0;
    await Promise.all(
      clients.map(async (c) => {
        for (let g = next++; g < groups; g = next++)
          await c.add(layout.groupDn(g), {
            objectClass: ['top', 'group'],
            sAMAccountName: `group${g}`,
            groupType: GLOBAL_SECURITY_GROUP,
            member: groupMembers(g, users, groups).map((i) => layout.userDn(`user${i}`)),
          });
      }),
    );
    const u = await guids(first, layout.staff, '(objectClass=user)');
    const g = await guids(first, layout.groupsOu, '(objectClass=group)');
    return {
      ...layout,
      userGuid: Array.from({ length: users }, (_, i) => u.get(`user${i}`) ?? ''),
      groupGuid: Array.from({ length: groups }, (_, k) => g.get(`group${k}`) ?? ''),
    };
  } finally {
    await Promise.all(clients.map((c) => c.unbind().catch(() => undefined)));
  }
}
