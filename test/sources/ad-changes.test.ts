/**
 * Active Directory change polling (uSNChanged above the DC's highestCommittedUSN, deleted
 * objects through the Show Deleted control) against a real Samba AD domain controller
 * provisioned for the test (test/helpers/samba-ad.ts).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Attribute, Change, Client } from 'ldapts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ldapSourceSchema, type LdapSourceInput } from '../../src/sources/ldap/schema.ts';
import { LdapSource } from '../../src/sources/ldap/source.ts';
import { ChangeFeed } from '../helpers/change-feed.ts';
import { startSambaAd, type SambaAdHandle } from '../helpers/samba-ad.ts';

let ad: SambaAdHandle;
let admin: Client;
let src: LdapSource;
/** The source as configured for the change tests; variants override keys. */
let cfg: LdapSourceInput;
let STAFF: string;
let GROUPS: string;
const dir = mkdtempSync(join(tmpdir(), 'ad-changes-'));

/** Enabled, no password required: a joiner without a password needs no ldaps for unicodePwd. */
const UAC_ENABLED = 0x200 | 0x20;
const UAC_DISABLED = UAC_ENABLED | 0x2;

const userDn = (sam: string): string => `CN=${sam},${STAFF}`;
const groupDn = (cn: string): string => `CN=${cn},${GROUPS}`;

async function addUser(sam: string): Promise<void> {
  await admin.add(userDn(sam), {
    objectClass: ['top', 'person', 'organizationalPerson', 'user'],
    sAMAccountName: sam,
    userPrincipalName: `${sam}@test.example`,
    givenName: sam,
    sn: 'Tester',
    displayName: `${sam} Tester`,
    mail: `${sam}@test.example`,
    userAccountControl: String(UAC_ENABLED),
  });
}

const uac = (value: number): Change =>
  new Change({ operation: 'replace', modification: new Attribute({ type: 'userAccountControl', values: [String(value)] }) });

const feed = new ChangeFeed(() => src);

const idByUpn = async (): Promise<Map<string, string>> => new Map((await src.read()).users.map((u) => [u.userName, u.externalId]));

beforeAll(async () => {
  ad = await startSambaAd();
  STAFF = `OU=Staff,${ad.baseDn}`;
  GROUPS = `OU=App Groups,${ad.baseDn}`;
  admin = new Client({ url: ad.url });
  await admin.bind(ad.adminDn, ad.adminPassword);
  await admin.add(STAFF, { objectClass: ['top', 'organizationalUnit'], ou: 'Staff' });
  await admin.add(GROUPS, { objectClass: ['top', 'organizationalUnit'], ou: 'App Groups' });
  await addUser('alice');
  await addUser('bob');
  // Global security group.
  await admin.add(groupDn('analysts'), {
    objectClass: ['top', 'group'],
    sAMAccountName: 'analysts',
    groupType: String(-2147483646),
    member: [userDn('alice')],
  });
  cfg = {
    type: 'ldap',
    preset: 'active-directory',
    url: ad.url,
    allowInsecure: true,
    bindDn: ad.adminDn,
    bindPassword: ad.adminPassword,
    timeoutSeconds: 10,
    connectTimeoutSeconds: 2,
    users: { baseDn: STAFF },
    groups: { baseDn: GROUPS },
  };
  src = new LdapSource(ldapSourceSchema.parse(cfg), { configDir: dir });
}, 240_000);

afterAll(async () => {
  await admin?.unbind().catch(() => undefined);
  await ad?.stop();
});

describe('Active Directory changes by uSNChanged (Samba AD)', () => {
  it('the first poll is a full read; its cursor holds the USN and the DC invocationId', async () => {
    expect(src.changeMechanism()?.name).toBe('ad-usn-changed');
    const r = await feed.poll();
    expect(r).toMatchObject({ kind: 'full', reason: 'no cursor' });
    if (r.kind !== 'full') return;
    expect(r.state.users.map((u) => u.userName).sort()).toEqual(['alice@test.example', 'bob@test.example']);
    const c = JSON.parse(r.cursor) as { mechanism: string; usn: number; dc: string };
    expect(c.mechanism).toBe('usn');
    expect(c.usn).toBeGreaterThan(0);
    expect(c.dc).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  });

  it('nothing changed: an empty delta with the same cursor', async () => {
    const before = feed.cursor;
    const d = await feed.delta();
    expect(d.users.upserted).toEqual([]);
    expect(d.cursor).toBe(before);
  });

  it('a joiner created in the Staff OU is an upserted user with its objectGUID id, timed by whenChanged', async () => {
    await addUser('carol');
    const d = await feed.delta();
    expect(d.users.upserted.map((u) => [u.userName, u.active])).toEqual([['carol@test.example', true]]);
    const ids = await idByUpn();
    const id = ids.get('carol@test.example');
    expect(d.users.upserted[0]?.externalId).toBe(id);
    expect(d.changedAt[id as string]).toBeTypeOf('number');
  });

  it('a leaver disabled through userAccountControl arrives as active: false', async () => {
    await admin.modify(userDn('bob'), uac(UAC_DISABLED));
    const d = await feed.delta();
    expect(d.users.upserted.map((u) => [u.userName, u.active])).toEqual([['bob@test.example', false]]);
  });

  it('a member added to a group arrives as the modified group with its complete member list', async () => {
    await admin.modify(
      groupDn('analysts'),
      new Change({ operation: 'add', modification: new Attribute({ type: 'member', values: [userDn('carol')] }) }),
    );
    const d = await feed.delta();
    const ids = await idByUpn();
    expect(d.groups.upserted.map((g) => g.displayName)).toEqual(['analysts']);
    expect(new Set(d.groups.upserted[0]?.members)).toEqual(new Set([ids.get('alice@test.example'), ids.get('carol@test.example')]));
    // The user's memberOf is a back-link: the user itself did not change.
    expect(d.users.upserted).toEqual([]);
  });

  it('a member added to a group nested in another: the parent arrives too (found through memberOf), with its flattened members', async () => {
    await admin.add(groupDn('departments'), {
      objectClass: ['top', 'group'],
      sAMAccountName: 'departments',
      groupType: String(-2147483646),
      member: [groupDn('analysts')],
    });
    await feed.delta();
    await addUser('erin');
    const member = (operation: 'add' | 'delete'): Change =>
      new Change({ operation, modification: new Attribute({ type: 'member', values: [userDn('erin')] }) });
    await admin.modify(groupDn('analysts'), member('add'));
    const d = await feed.delta();
    const ids = await idByUpn();
    expect(d.groups.upserted.map((g) => g.displayName).sort()).toEqual(['analysts', 'departments']);
    const departments = d.groups.upserted.find((g) => g.displayName === 'departments');
    expect(new Set(departments?.members)).toEqual(new Set(['alice', 'carol', 'erin'].map((u) => ids.get(`${u}@test.example`))));
    await admin.modify(groupDn('analysts'), member('delete'));
    await admin.del(userDn('erin'));
    await feed.delta();
  });

  it('a deleted user is removed, seen through the Show Deleted control, with the id read() used', async () => {
    const id = (await idByUpn()).get('carol@test.example') as string;
    await admin.del(userDn('carol'));
    const d = await feed.delta();
    expect(d.users.removed).toContain(id);
    expect(d.users.upserted).toEqual([]);
    expect(d.changedAt[id]).toBeTypeOf('number');
    // AD dropped the link from the group without changing the group's uSNChanged: the group is
    // not re-sent; removing the user takes it out, which is what a full read now says.
    const analysts = (await src.read()).groups.find((g) => g.displayName === 'analysts');
    expect(analysts?.members).toEqual([(await idByUpn()).get('alice@test.example')]);
    expect(src.changeMechanism()?.blindSpots.some((b) => /Show Deleted/.test(b))).toBe(false);
  });

  it('a cursor taken on another domain controller (other invocationId) means a full read', async () => {
    const other = { ...(JSON.parse(feed.cursor as string) as Record<string, unknown>), dc: '00000000-1111-2222-3333-444444444444' };
    const r = await src.changes(JSON.stringify(other));
    expect(r).toMatchObject({ kind: 'full', reason: 'cursor expired' });
    if (r.kind === 'full') expect(r.detail).toMatch(/another domain controller/);
  });

  it('with deletedObjects off, a deletion is not seen and is named as a blind spot', async () => {
    const blind = new LdapSource(ldapSourceSchema.parse({ ...cfg, changes: { deletedObjects: false } }), { configDir: dir });
    const start = await blind.changes(undefined);
    await addUser('dave');
    await admin.del(userDn('dave'));
    const d = await blind.changes(start.cursor);
    expect(d.kind).toBe('delta');
    if (d.kind === 'delta') expect(d.users.removed).toEqual([]);
    expect(blind.changeMechanism()?.blindSpots.some((b) => /deleted users and groups/.test(b))).toBe(true);
  });
});
