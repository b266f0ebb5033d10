/**
 * A changed group with more members than `changes.maxMemberLookups`, against a real slapd: its
 * members are answered from the change reader's index of admissions after one search for the
 * user DNs present now, never from a full read, and the member list equals what read() gives —
 * with members renamed, deleted, rejected and joined since the index was built.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Attribute, Change, Client } from 'ldapts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SourceChanges } from '../../src/sources/changes.ts';
import { ldapSourceSchema, type LdapSourceInput } from '../../src/sources/ldap/schema.ts';
import { LdapChangeReader } from '../../src/sources/ldap/changes.ts';
import { LdapSource } from '../../src/sources/ldap/source.ts';
import { UserDnIndex } from '../../src/sources/ldap/user-dn-index.ts';
import { ChangeFeed } from '../helpers/change-feed.ts';
import type { LdifEntry } from '../helpers/ldif.ts';
import { slapdSourceConfig, startSlapd, type SlapdHandle } from '../helpers/slapd.ts';

const SUFFIX = 'dc=example,dc=org';
const PEOPLE = `ou=people,${SUFFIX}`;
const GROUPS = `ou=groups,${SUFFIX}`;
const dn = (uid: string): string => `uid=${uid},${PEOPLE}`;
const ALL = `cn=all-staff,${GROUPS}`;
const NAMES = ['p1', 'p2', 'p3', 'p4', 'p5', 'p6', 'p7', 'p8'];

const person = (uid: string, mail: string | null = `${uid}@example.org`): LdifEntry => ({
  dn: dn(uid),
  attrs: { objectClass: 'inetOrgPerson', uid, cn: uid, sn: uid, ...(mail === null ? {} : { mail }) },
});

let sl: SlapdHandle;
let admin: Client;
let cfg: LdapSourceInput;
const dir = mkdtempSync(join(tmpdir(), 'ldap-large-groups-'));
const logs: { membersFrom?: string }[] = [];
const logger = { info: (o: object) => logs.push(o as { membersFrom?: string }), warn: () => undefined, debug: () => undefined };

beforeAll(async () => {
  sl = await startSlapd({
    entries: [
      { dn: PEOPLE, attrs: { objectClass: 'organizationalUnit', ou: 'people' } },
      { dn: GROUPS, attrs: { objectClass: 'organizationalUnit', ou: 'groups' } },
      ...NAMES.map((n) => person(n)),
      // Without mail: rejected by read() (the login is the mail here), a member all the same.
      person('nomail', null),
      { dn: ALL, attrs: { objectClass: 'groupOfNames', cn: 'all-staff', member: [...NAMES, 'nomail'].map(dn) } },
    ],
  });
  // Three lookups at most: the all-staff group (9 members) is past the bound.
  cfg = slapdSourceConfig(
    sl,
    { people: PEOPLE, groups: GROUPS },
    {
      users: { baseDn: PEOPLE, attributes: { userName: 'mail' } },
      changes: { overlapSeconds: 2, maxMemberLookups: 3 },
    },
  );
  admin = new Client({ url: sl.url });
  await admin.bind(sl.adminDn, sl.adminPassword);
});

afterAll(async () => {
  await admin?.unbind().catch(() => undefined);
  await sl?.stop();
});

const source = (): LdapSource => new LdapSource(ldapSourceSchema.parse(cfg), { configDir: dir, logger });
const members = async (src: LdapSource, name: string): Promise<string[]> =>
  [...((await src.read()).groups.find((g) => g.displayName === name)?.members ?? [])].sort();

/**
 * A change reader with its own bound connection, after its first (full) poll, and that
 * connection with `before` run once just before the first base read of `dn` (an interleaving
 * of the poll with a directory write, on the real server).
 */
async function readerWithRace(
  target: string,
  before: () => Promise<void>,
): Promise<{ reader: LdapChangeReader; client: Client; hooked: Client; first: SourceChanges; raced: () => boolean }> {
  const src = new LdapSource(ldapSourceSchema.parse({ ...cfg, changes: { overlapSeconds: 2 } }), { configDir: dir });
  const reader = new LdapChangeReader(src, undefined);
  const client = new Client({ url: sl.url });
  await client.bind(sl.readerDn, sl.readerPassword);
  const first = await reader.changes(client, undefined, undefined);
  let raced = false;
  const search = client.search.bind(client);
  const hooked = Object.assign(Object.create(client) as Client, {
    search: async (base: string, options: Parameters<Client['search']>[1]) => {
      if (!raced && base === target && options?.scope === 'base') {
        raced = true;
        await before();
      }
      return search(base, options);
    },
  });
  return { reader, client, hooked, first, raced: () => raced };
}

const idOf = (r: SourceChanges, userName: string): string | undefined =>
  r.kind === 'full' ? r.state.users.find((u) => u.userName === userName)?.externalId : undefined;

describe('a changed group past the member lookup bound', () => {
  it('is resolved from the index of admissions, equal to read(), after renames, deletions and joiners', async () => {
    const src = source();
    const feed = new ChangeFeed(() => src);
    expect((await feed.poll()).kind).toBe('full');
    // Since the index was built: p1 renamed (the group keeps its old DN: no refint here), p2
    // deleted (a dangling member DN), a joiner added straight into the group, p3 now without mail.
    await admin.modifyDN(dn('p1'), 'uid=p1-renamed');
    await admin.del(dn('p2'));
    await admin.add(dn('joiner'), { objectClass: 'inetOrgPerson', uid: 'joiner', cn: 'joiner', sn: 'joiner', mail: 'joiner@example.org' });
    await admin.modify(dn('p3'), new Change({ operation: 'delete', modification: new Attribute({ type: 'mail', values: [] }) }));
    await admin.modify(ALL, new Change({ operation: 'add', modification: new Attribute({ type: 'member', values: [dn('joiner')] }) }));
    logs.length = 0;
    const d = await feed.delta();
    const group = d.groups.upserted.find((g) => g.displayName === 'all-staff');
    expect(group).toBeDefined();
    expect([...(group?.members ?? [])].sort()).toEqual(await members(src, 'all-staff'));
    // p1 (old DN), p2 (gone), p3 and nomail (rejected) are not members; the joiner is.
    expect(group?.members).toHaveLength(NAMES.length - 3 + 1);
    expect(logs.flatMap((l) => (l.membersFrom === undefined ? [] : [l.membersFrom]))).toEqual(['lookups']);
  });

  it('without an index yet (a reader that has not read the directory) it falls back to a full read', async () => {
    const first = source();
    const feed = new ChangeFeed(() => first);
    await feed.poll();
    // Another reader (a restarted process) continues from the cursor without an index.
    const restarted = source();
    await admin.modify(ALL, new Change({ operation: 'delete', modification: new Attribute({ type: 'member', values: [dn('joiner')] }) }));
    logs.length = 0;
    const d = await restarted.changes(feed.cursor);
    if (d.kind !== 'delta') throw new Error('expected a delta');
    expect(logs.flatMap((l) => (l.membersFrom === undefined ? [] : [l.membersFrom]))).toEqual(['full read']);
    expect([...(d.groups.upserted[0]?.members ?? [])].sort()).toEqual(await members(restarted, 'all-staff'));
  });
});

describe('many changed entries in one poll', () => {
  it('past the read-by-DN bound they are found by one search of each scope: the same records read() gives', async () => {
    const src = source();
    const feed = new ChangeFeed(() => src);
    await feed.poll();
    const joiners = Array.from({ length: 60 }, (_, i) => `bulk${i}`);
    for (const uid of joiners)
      await admin.add(dn(uid), { objectClass: 'inetOrgPerson', uid, cn: uid, sn: uid, mail: `${uid}@example.org` });
    // One of them without mail: rejected exactly as read() rejects it.
    await admin.modify(dn('bulk7'), new Change({ operation: 'delete', modification: new Attribute({ type: 'mail', values: [] }) }));
    const d = await feed.delta();
    const full = await src.read();
    const expected = full.users.filter((u) => joiners.some((j) => u.userName === `${j}@example.org`));
    expect(d.users.upserted.map((u) => u.userName).sort()).toEqual(expected.map((u) => u.userName).sort());
    expect(d.users.upserted).toHaveLength(59);
    expect(d.rejected.map((r) => r.ref)).toEqual([dn('bulk7')]);
  });
});

describe('a member renamed while the poll resolves its group', () => {
  it('stays a member: the link moved with it (AD, refint), so the group is read again and resolved again', async () => {
    const RACE = `cn=race,${GROUPS}`;
    for (const uid of ['r1', 'r2', 'r3'])
      await admin.add(dn(uid), { objectClass: 'inetOrgPerson', uid, cn: uid, sn: uid, mail: `${uid}@example.org` });
    await admin.add(RACE, { objectClass: 'groupOfNames', cn: 'race', member: [dn('r1'), dn('r2')] });
    // The first look-up of r1 by DN comes after the group was read: r1 is renamed just then,
    // and the group's link follows it, as Active Directory or the refint overlay do.
    const { reader, client, hooked, first, raced } = await readerWithRace(dn('r1'), async () => {
      await admin.modifyDN(dn('r1'), 'uid=r1-renamed');
      const members = [dn('r1-renamed'), dn('r2'), dn('r3')];
      await admin.modify(RACE, new Change({ operation: 'replace', modification: new Attribute({ type: 'member', values: members }) }));
    });
    try {
      const r1 = idOf(first, 'r1@example.org');
      expect(r1).toBeDefined();
      await admin.modify(RACE, new Change({ operation: 'add', modification: new Attribute({ type: 'member', values: [dn('r3')] }) }));
      const d = await reader.changes(hooked, first.cursor, undefined);
      expect(raced()).toBe(true);
      if (d.kind !== 'delta') throw new Error('expected a delta');
      const race = d.groups.upserted.find((x) => x.displayName === 'race');
      expect(race?.members).toHaveLength(3);
      expect(race?.members).toContain(r1);
    } finally {
      await client.unbind().catch(() => undefined);
    }
  });
});

describe('a changed user renamed while the poll classifies it', () => {
  it('is not taken for a leaver: no removal now, the next poll carries it under its new name', async () => {
    await admin.add(dn('mover'), { objectClass: 'inetOrgPerson', uid: 'mover', cn: 'mover', sn: 'mover', mail: 'mover@example.org' });
    // The change scan sees the entry at its DN; it is renamed before the poll reads it there.
    const { reader, client, hooked, first, raced } = await readerWithRace(dn('mover'), () =>
      admin.modifyDN(dn('mover'), 'uid=mover-renamed'),
    );
    try {
      const id = idOf(first, 'mover@example.org');
      expect(id).toBeDefined();
      await admin.modify(dn('mover'), new Change({ operation: 'replace', modification: new Attribute({ type: 'sn', values: ['Moved'] }) }));
      const d = await reader.changes(hooked, first.cursor, undefined);
      expect(raced()).toBe(true);
      if (d.kind !== 'delta') throw new Error('expected a delta');
      expect(d.users.removed).not.toContain(id);
      const next = await reader.changes(client, d.cursor, undefined);
      if (next.kind !== 'delta') throw new Error('expected a delta');
      expect(next.users.removed).not.toContain(id);
      expect(next.users.upserted.find((u) => u.externalId === id)?.attributes['dn']).toBe(dn('mover-renamed'));
    } finally {
      await client.unbind().catch(() => undefined);
    }
  });
});

describe('the index of admissions', () => {
  it('keeps the latest admission of each DN: an id replaces a rejection and the other way round', () => {
    const index = new UserDnIndex();
    index.record({ userByDn: new Map([['uid=a', 'id-a']]), rejectedUserDns: new Set(['uid=b']) });
    expect([index.idOf('uid=a'), index.isRejected('uid=b'), index.idOf('uid=c')]).toEqual(['id-a', true, undefined]);
    index.record({ userByDn: new Map([['uid=b', 'id-b']]), rejectedUserDns: new Set(['uid=a']) });
    expect([index.idOf('uid=a'), index.isRejected('uid=a'), index.idOf('uid=b'), index.isRejected('uid=b')]).toEqual([
      undefined,
      true,
      'id-b',
      false,
    ]);
    expect(index.size).toBe(2);
  });
});
