/**
 * The LDAP change reader (modifyTimestamp polling) against a real slapd: each directory event
 * made with an admin connection is polled with the previous cursor and must come back as the
 * complete current record read() would return, or as a removal.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Attribute, Change, Client } from 'ldapts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { supportsChanges } from '../../src/sources/changes.ts';
import type { SourceDelta } from '../../src/sources/changes.ts';
import { parseGeneralizedTime } from '../../src/sources/ldap/change-cursor.ts';
import { ldapSourceSchema, type LdapSourceInput } from '../../src/sources/ldap/schema.ts';
import { LdapSource } from '../../src/sources/ldap/source.ts';
import { ChangeFeed } from '../helpers/change-feed.ts';
import { startTcpRelay } from '../helpers/tcp-relay.ts';
import { slapdSourceConfig, startSlapd, type SlapdHandle } from '../helpers/slapd.ts';
import type { LdifEntry } from '../helpers/ldif.ts';

const SUFFIX = 'dc=example,dc=org';
const PEOPLE = `ou=people,${SUFFIX}`;
const FORMER = `ou=former,${SUFFIX}`;
const GROUPS = `ou=groups,${SUFFIX}`;
const dn = (uid: string, ou = PEOPLE): string => `uid=${uid},${ou}`;
const groupDn = (cn: string): string => `cn=${cn},${GROUPS}`;

const person = (uid: string, extra: Record<string, string> = {}): LdifEntry => ({
  dn: dn(uid),
  attrs: { objectClass: 'inetOrgPerson', uid, cn: `${uid} person`, sn: uid, mail: `${uid}@example.org`, employeeType: 'staff', ...extra },
});

let sl: SlapdHandle;
let admin: Client;
let src: LdapSource;
let baseCfg: LdapSourceInput;
const dir = mkdtempSync(join(tmpdir(), 'ldap-changes-'));

const source = (over: Partial<LdapSourceInput> = {}): LdapSource =>
  new LdapSource(ldapSourceSchema.parse({ ...baseCfg, ...over }), { configDir: dir });

const feed = new ChangeFeed(() => src);

/** The externalIds of a full read, by userName. */
const idsByName = async (): Promise<Map<string, string>> => new Map((await src.read()).users.map((u) => [u.userName, u.externalId]));

/** Adds `memberDn` to the group `cn` (an admin write). */
const addMember = (cn: string, memberDn: string): Promise<void> =>
  admin.modify(groupDn(cn), new Change({ operation: 'add', modification: new Attribute({ type: 'member', values: [memberDn] }) }));

const idOf = async (uid: string): Promise<string> => {
  const state = await src.read();
  const u = state.users.find((x) => x.userName === uid);
  if (!u) throw new Error(`${uid} not read`);
  return u.externalId;
};

beforeAll(async () => {
  sl = await startSlapd({
    entries: [
      { dn: PEOPLE, attrs: { objectClass: 'organizationalUnit', ou: 'people' } },
      { dn: FORMER, attrs: { objectClass: 'organizationalUnit', ou: 'former' } },
      { dn: GROUPS, attrs: { objectClass: 'organizationalUnit', ou: 'groups' } },
      person('alice'),
      person('bob'),
      person('carol'),
      person('dave'),
      { dn: groupDn('team'), attrs: { objectClass: 'groupOfNames', cn: 'team', member: [dn('alice'), dn('bob')] } },
      // `all` reaches team's users through nesting.
      { dn: groupDn('all'), attrs: { objectClass: 'groupOfNames', cn: 'all', member: [groupDn('team'), dn('carol')] } },
      { dn: groupDn('other'), attrs: { objectClass: 'groupOfNames', cn: 'other', member: [dn('carol')] } },
    ],
  });
  baseCfg = slapdSourceConfig(sl, { people: PEOPLE, groups: GROUPS }, { changes: { overlapSeconds: 2 } });
  src = source();
  admin = new Client({ url: sl.url });
  await admin.bind(sl.adminDn, sl.adminPassword);
});

afterAll(async () => {
  await admin?.unbind().catch(() => undefined);
  await sl?.stop();
});

describe('LDAP changes by modifyTimestamp (slapd)', () => {
  it('the first poll without a cursor is a full read with a cursor in server time', async () => {
    expect(supportsChanges(src)).toBe(true);
    expect(src.changeMechanism()).toMatchObject({ name: 'ldap-modify-timestamp', pollIntervalMs: 2_000 });
    const r = await feed.poll();
    expect(r.kind).toBe('full');
    if (r.kind !== 'full') return;
    expect(r.reason).toBe('no cursor');
    expect(r.state.users.map((u) => u.userName).sort()).toEqual(['alice', 'bob', 'carol', 'dave']);
    const c = JSON.parse(r.cursor) as { mechanism: string; t: string };
    expect(c.mechanism).toBe('modify-timestamp');
    // The latest change in the directory (the slapadd load), not this machine's clock.
    expect(c.t).toMatch(/^\d{14}Z$/);
  });

  it('an empty round returns nothing and leaves the cursor unchanged', async () => {
    const before = feed.cursor;
    const d = await feed.delta();
    expect(d.users.upserted).toEqual([]);
    expect(d.users.removed).toEqual([]);
    expect(d.groups.upserted).toEqual([]);
    expect(d.cursor).toBe(before);
  });

  it('a joiner added to the people OU is an upserted user, timed by its modifyTimestamp', async () => {
    await admin.add(dn('erin'), { objectClass: 'inetOrgPerson', uid: 'erin', cn: 'Erin Joiner', sn: 'Joiner', mail: 'erin@example.org' });
    const d = await feed.delta();
    expect(d.users.upserted.map((u) => u.userName)).toEqual(['erin']);
    const erin = d.users.upserted[0]!;
    expect(erin).toMatchObject({ active: true, emails: ['erin@example.org'], attributes: { dn: dn('erin') } });
    const at = d.changedAt[erin.externalId];
    expect(at).toBeTypeOf('number');
    // Generalized time in whole seconds: at most a second before now, never in the future by much.
    expect(Math.abs((at as number) - Date.now())).toBeLessThan(60_000);
    expect(d.users.removed).toEqual([]);
    expect(d.groups.upserted).toEqual([]);
  });

  it('an attribute change arrives as the complete current record, equal to what read() returns', async () => {
    await admin.modify(
      dn('bob'),
      new Change({ operation: 'replace', modification: new Attribute({ type: 'mail', values: ['robert@example.org'] }) }),
    );
    const d = await feed.delta();
    expect(d.users.upserted.map((u) => u.userName)).toEqual(['bob']);
    const full = (await src.read()).users.find((u) => u.userName === 'bob');
    expect(d.users.upserted[0]).toEqual(full);
    expect(full?.emails).toEqual(['robert@example.org']);
  });

  it('a leaver disabled in LDAP arrives as active: false', async () => {
    await admin.modify(
      dn('dave'),
      new Change({ operation: 'replace', modification: new Attribute({ type: 'employeeType', values: ['disabled'] }) }),
    );
    const d = await feed.delta();
    expect(d.users.upserted.map((u) => [u.userName, u.active])).toEqual([['dave', false]]);
  });

  it('a rename (modrdn) keeps the entryUUID and carries the new DN and login', async () => {
    const id = await idOf('erin');
    await admin.modifyDN(dn('erin'), 'uid=erin.j');
    const d = await feed.delta();
    expect(d.users.upserted).toHaveLength(1);
    expect(d.users.upserted[0]).toMatchObject({ externalId: id, userName: 'erin.j', attributes: { dn: `uid=erin.j,${PEOPLE}` } });
    expect(d.users.removed).toEqual([]);
  });

  it('a user moved out of the people OU is removed', async () => {
    const id = await idOf('carol');
    await admin.modifyDN(dn('carol'), `uid=carol,${FORMER}`);
    const d = await feed.delta();
    expect(d.users.upserted).toEqual([]);
    expect(d.users.removed).toContain(id);
    expect(d.changedAt[id]).toBeTypeOf('number');
  });

  it('a member added to a group arrives as the group with its complete flattened member list', async () => {
    await addMember('other', dn('alice'));
    const d = await feed.delta();
    const ids = await idsByName();
    expect(d.groups.upserted.map((g) => g.displayName)).toEqual(['other']);
    // carol moved out of scope: the complete list is alice alone.
    expect(d.groups.upserted[0]!.members).toEqual([ids.get('alice')]);
    expect(d.users.upserted).toEqual([]);
  });

  it('a member removed from a group arrives as the group without them', async () => {
    await admin.modify(
      groupDn('other'),
      new Change({ operation: 'delete', modification: new Attribute({ type: 'member', values: [dn('alice')] }) }),
    );
    const d = await feed.delta();
    expect(d.groups.upserted.map((g) => [g.displayName, g.members])).toEqual([['other', []]]);
  });

  it("a change to a nested group re-resolves the parent's members", async () => {
    await addMember('team', dn('dave'));
    const d = await feed.delta();
    const ids = await idsByName();
    const byName = new Map(d.groups.upserted.map((g) => [g.displayName, new Set(g.members)]));
    expect([...byName.keys()].sort()).toEqual(['all', 'team']);
    const team = new Set(['alice', 'bob', 'dave'].map((u) => ids.get(u)));
    expect(byName.get('team')).toEqual(team);
    // all = team's users (carol left the scope).
    expect(byName.get('all')).toEqual(team);
    const teamId = d.groups.upserted.find((g) => g.displayName === 'team')!.externalId;
    expect(d.changedAt[teamId]).toBeTypeOf('number');
  });

  it('a nested group change resolved by member lookups equals the resolution from a full read', async () => {
    const logs: { membersFrom?: string }[] = [];
    const logger = { info: (o: object) => logs.push(o as { membersFrom?: string }), warn: () => undefined, debug: () => undefined };
    const lookups = new LdapSource(ldapSourceSchema.parse(baseCfg), { configDir: dir, logger });
    const fullRead = new LdapSource(ldapSourceSchema.parse({ ...baseCfg, changes: { overlapSeconds: 2, maxMemberLookups: 0 } }), {
      configDir: dir,
      logger,
    });
    await addMember('team', `uid=erin.j,${PEOPLE}`);
    const a = await lookups.changes(feed.cursor);
    const b = await fullRead.changes(feed.cursor);
    expect(logs.flatMap((l) => (l.membersFrom === undefined ? [] : [l.membersFrom]))).toEqual(['lookups', 'full read']);
    if (a.kind !== 'delta' || b.kind !== 'delta') throw new Error('expected deltas');
    const norm = (d: SourceDelta) => d.groups.upserted.map((g) => [g.displayName, [...g.members].sort()]).sort();
    expect(norm(a)).toEqual(norm(b));
    expect(norm(a).map(([name]) => name)).toEqual(['all', 'team']);
    expect(norm(a)[1]![1] as string[]).toHaveLength(4);
    feed.cursor = a.cursor;
  });

  it('two changes within the same second are both seen: the overlap looks again, entryCSN skips only what was delivered', async () => {
    const mail = (v: string): Change => new Change({ operation: 'replace', modification: new Attribute({ type: 'mail', values: [v] }) });
    await admin.modify(dn('alice'), mail('alice.1@example.org'));
    const first = await feed.delta();
    await admin.modify(dn('alice'), mail('alice.2@example.org'));
    const second = await feed.delta();
    expect(first.users.upserted.map((u) => u.emails)).toEqual([['alice.1@example.org']]);
    expect(second.users.upserted.map((u) => u.emails)).toEqual([['alice.2@example.org']]);
    // Delivered once: the next poll, still inside the overlap window, repeats nothing.
    const third = await feed.delta();
    expect(third.users.upserted).toEqual([]);
    const cursorOf = (text: string) => JSON.parse(text) as { t: string; seen: Record<string, string> };
    expect(cursorOf(third.cursor).t >= cursorOf(second.cursor).t).toBe(true);
  });

  it('after a burst the window moves on with the server clock: quiet polls search past it and keep one cursor', async () => {
    const mail = (v: string): Change => new Change({ operation: 'replace', modification: new Attribute({ type: 'mail', values: [v] }) });
    for (const uid of ['alice', 'dave']) await admin.modify(dn(uid), mail(`${uid}.burst@example.org`));
    const burst = await feed.delta();
    expect(burst.users.upserted.map((u) => u.userName).sort()).toEqual(['alice', 'dave']);
    const stamps = Object.values(burst.changedAt);
    const cursorOf = (text: string) => JSON.parse(text) as { t: string; seen: Record<string, string> };
    // overlapSeconds is 2 here: within a few quiet polls the window starts after the burst.
    let quiet = cursorOf(burst.cursor);
    for (let i = 0; i < 20 && Object.keys(quiet.seen).length > 0; i++) {
      await new Promise((r) => setTimeout(r, 500));
      const d = await feed.delta();
      expect(d.users.upserted).toEqual([]);
      quiet = cursorOf(d.cursor);
    }
    expect(quiet.seen).toEqual({});
    const windowStart = (parseGeneralizedTime(quiet.t) as number) - 2000;
    expect(windowStart).toBeGreaterThan(Math.max(...stamps));
    // The window is empty now: the cursor is handed back unchanged, nothing to store.
    const held = feed.cursor;
    expect((await feed.delta()).cursor).toBe(held);
    // And a change after the quiet spell is still seen.
    await admin.modify(dn('alice'), mail('alice.after@example.org'));
    expect((await feed.delta()).users.upserted.map((u) => u.emails)).toEqual([['alice.after@example.org']]);
  });

  it('a cursor replayed from before a change delivers it again, unchanged (duplicates are harmless)', async () => {
    const old = feed.cursor;
    await admin.modify(dn('bob'), new Change({ operation: 'replace', modification: new Attribute({ type: 'sn', values: ['Builder'] }) }));
    const a = await src.changes(old);
    const b = await src.changes(old);
    expect(a.kind).toBe('delta');
    // The same records; the cursor may have moved on with the server clock.
    expect({ ...b, cursor: '' }).toEqual({ ...a, cursor: '' });
    feed.cursor = a.cursor;
  });

  it('polls share one bound connection; one the network cut is replaced within the poll, and no change is lost', async () => {
    const relay = await startTcpRelay(Number(new URL(sl.url).port));
    const polled = source({ url: `ldap://127.0.0.1:${relay.port}` });
    try {
      const feedVia = new ChangeFeed(() => polled);
      // Another server URL: the first poll is a full read, the next ones deltas.
      expect((await feedVia.poll()).kind).toBe('full');
      for (let i = 0; i < 2; i++) await feedVia.delta();
      expect(relay.connections).toBe(1);
      // The connection dies between polls (an idle timeout, a firewall); a change is made meanwhile.
      relay.cut();
      await admin.modify(
        dn('alice'),
        new Change({ operation: 'replace', modification: new Attribute({ type: 'sn', values: ['Relayed'] }) }),
      );
      const d = await feedVia.delta();
      expect(d.users.upserted.map((u) => u.userName)).toEqual(['alice']);
      // A new bound connection; when the poll began before the client noticed the cut, ldapts
      // reconnected without a bind first, and that answer was refused (one connection more).
      expect(relay.connections).toBeGreaterThanOrEqual(2);
      expect(relay.connections).toBeLessThanOrEqual(3);
    } finally {
      await polled.close();
      await relay.close();
    }
    // The shared feed takes the change too, so the scenarios after this one start level.
    expect((await feed.delta()).users.upserted.map((u) => u.userName)).toEqual(['alice']);
  });

  it('a deleted user is invisible to modifyTimestamp polling (documented blind spot)', async () => {
    await admin.del(dn('bob'));
    const d = await feed.delta();
    expect(d.users.removed).toEqual([]);
    expect(d.users.upserted).toEqual([]);
    expect(src.changeMechanism()?.blindSpots.some((b) => /deleted entries/.test(b))).toBe(true);
  });

  it('a cursor from another configuration or of another form means a full read (cursor expired)', async () => {
    const other = source({ users: { baseDn: PEOPLE, filter: '(uid=a*)' } });
    const r = await other.changes(feed.cursor);
    expect(r).toMatchObject({ kind: 'full', reason: 'cursor expired' });
    const junk = await src.changes('not json');
    expect(junk).toMatchObject({ kind: 'full', reason: 'cursor expired' });
  });

  it('a refused bind or a server that went away fails the poll with the same classified errors as read()', async () => {
    await expect(source({ bindPassword: 'wrong' }).changes(feed.cursor)).rejects.toMatchObject({
      code: 'E_AUTH_INVALID',
      message: expect.stringMatching(/invalid credentials/),
    });
    const gone = source({ url: 'ldap://127.0.0.1:1' });
    await expect(gone.changes(feed.cursor)).rejects.toMatchObject({
      code: 'E_SOURCE_FAILED',
      message: expect.stringMatching(/ECONNREFUSED/),
    });
  });

  it('changes.mechanism: off leaves the source without a change reader', () => {
    const off = source({ changes: { mechanism: 'off' } });
    expect(off.changeMechanism()).toBeUndefined();
    expect(supportsChanges(off)).toBe(false);
  });
});
