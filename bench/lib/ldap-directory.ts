/**
 * The LDAP benchmark's directory, generated as a stream so a million users never sit in
 * memory at once: the same users and groups as LDIF entries for slapadd and as a file-source
 * JSON document (written in chunks), with the same externalIds on both sides (explicit
 * entryUUIDs, which slapadd keeps), so a plan of either against a simulator seeded from the
 * JSON is a no-op.
 *
 * Shape: every user in two groups (~2 × users / groups members each), plus 5 large groups
 * of users / 10 members each.
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import type { LdifEntry } from '../../test/helpers/ldif.ts';

export const SUFFIX = 'dc=example,dc=org';
export const PEOPLE = `ou=people,${SUFFIX}`;
export const GROUPS = `ou=groups,${SUFFIX}`;

/** Deterministic, well-formed UUIDs (what OpenLDAP's entryUUID looks like). */
const uuid = (kind: number, n: number): string =>
  `${kind.toString(16).padStart(8, '0')}-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;
export const userId = (i: number): string => uuid(1, i);
export const groupId = (g: number): string => uuid(2, g);

export function groupMembers(g: number, users: number, groups: number): number[] {
  const out: number[] = [];
  for (let i = g; i < users; i += groups) out.push(i);
  for (let i = (g * 7) % groups; i < users; i += groups) if (i !== g) out.push(i);
  if (g < 5) for (let i = 0; i < users; i += 10) out.push(i);
  return [...new Set(out)];
}

export function membershipCount(users: number, groups: number): number {
  let n = 0;
  for (let g = 0; g < groups; g++) n += groupMembers(g, users, groups).length;
  return n;
}

export function* ldifEntries(users: number, groups: number): Generator<LdifEntry> {
  yield { dn: PEOPLE, attrs: { objectClass: 'organizationalUnit', ou: 'people' } };
  yield { dn: GROUPS, attrs: { objectClass: 'organizationalUnit', ou: 'groups' } };
  for (let i = 0; i < users; i++) {
    const uid = `user${i}`;
    yield {
      dn: `uid=${uid},${PEOPLE}`,
      attrs: {
        objectClass: 'inetOrgPerson',
        uid,
        cn: `User ${i}`,
        givenName: 'User',
        sn: `N${i}`,
        mail: `${uid}@example.org`,
        departmentNumber: `d${i % 50}`,
        entryUUID: userId(i),
      },
    };
  }
  for (let g = 0; g < groups; g++) {
    yield {
      dn: `cn=group${g},${GROUPS}`,
      attrs: {
        objectClass: 'groupOfNames',
        cn: `group${g}`,
        member: groupMembers(g, users, groups).map((i) => `uid=user${i},${PEOPLE}`),
        entryUUID: groupId(g),
      },
    };
  }
}

/** Writes what `fill` puts to `path` in ~1 MB chunks: a large document without holding it whole. */
export function writeChunked(path: string, fill: (put: (s: string) => void) => void): void {
  const fd = openSync(path, 'w');
  let buf = '';
  try {
    fill((s) => {
      buf += s;
      if (buf.length >= 1 << 20) {
        writeSync(fd, buf);
        buf = '';
      }
    });
    writeSync(fd, buf);
  } finally {
    closeSync(fd);
  }
}

/** The same directory as a file-source JSON document, written in ~1 MB chunks. */
export function writeJsonDirectory(path: string, users: number, groups: number): void {
  writeChunked(path, (put) => {
    put('{"users":[');
    for (let i = 0; i < users; i++) {
      const uid = `user${i}`;
      const u = {
        externalId: userId(i),
        userName: uid,
        givenName: 'User',
        familyName: `N${i}`,
        displayName: `User ${i}`,
        emails: [`${uid}@example.org`],
        attributes: { department: `d${i % 50}` },
      };
      put(`${i > 0 ? ',' : ''}${JSON.stringify(u)}`);
    }
    put('],"groups":[');
    for (let g = 0; g < groups; g++) {
      const grp = { externalId: groupId(g), displayName: `group${g}`, members: groupMembers(g, users, groups).map(userId) };
      put(`${g > 0 ? ',' : ''}${JSON.stringify(grp)}`);
    }
    put(']}');
  });
}
