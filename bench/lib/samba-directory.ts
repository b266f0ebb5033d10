/**
 * The change benchmark's directory in a Samba AD domain controller (test/helpers/samba-ad.ts):
 * the same shape as bench/lib/ldap-directory.ts (every user in two groups, 5 large groups of a
 * tenth of the users), as AD objects: users `CN=user<i>,OU=Staff` (sAMAccountName user<i>,
 * userPrincipalName user<i>@test.example, enabled without a password: userAccountControl
 * 0x220) and global security groups `CN=group<g>,OU=App Groups`.
 *
 * Loaded offline, between provisioning and the DC's start: the entries as LDIF, added to the
 * DC's sam.ldb through Samba's own module stack (the Python `samba.samdb.SamDB` that samba-tool
 * uses, opened as the domain Administrator's session, as an LDAP add by the administrator would
 * be): objectGUID, objectSid (RID), uSNCreated / uSNChanged, whenCreated / whenChanged,
 * replPropertyMetaData and the memberOf back-links are made by the same modules as for an add
 * over LDAP. Over LDAP the DC commits one transaction per add in its single LDAP process, and a
 * 10,000-user load took 23 minutes; offline the adds are committed 100 at a time.
 * Ids are objectGUIDs the DC assigned: read back over LDAP once it runs.
 */
import { execFile } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'ldapts';
import { decodeObjectGuid } from '../../src/sources/ldap/guid.ts';
import { SAMBA_TOOL_BIN, type SambaAdHandle, type SambaProvisioned } from '../../test/helpers/samba-ad.ts';
import { groupMembers, writeChunked } from './ldap-directory.ts';

const execFileP = promisify(execFile);

/** NORMAL_ACCOUNT | PASSWD_NOTREQD: enabled, and created without unicodePwd (no ldaps needed). */
export const UAC_ENABLED = 0x200 | 0x20;
export const UAC_DISABLED = UAC_ENABLED | 0x2;
const GLOBAL_SECURITY_GROUP = String(-2147483646);

/** Adds per sam.ldb transaction: a whole load in one transaction is slower (2.5× at 10,000 users), so is one per add. */
const ADDS_PER_TRANSACTION = 100;

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

export function sambaLayout(baseDn: string): Omit<SambaDirectory, 'userGuid' | 'groupGuid'> {
  const staff = `OU=Staff,${baseDn}`;
  const groupsOu = `OU=App Groups,${baseDn}`;
  const realm = baseDn.replace(/DC=/gi, '').replace(/,/g, '.').toLowerCase();
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

export function sambaGroup(g: number, users: number, groups: number, userDn: (name: string) => string): Record<string, string | string[]> {
  return {
    objectClass: ['top', 'group'],
    sAMAccountName: `group${g}`,
    groupType: GLOBAL_SECURITY_GROUP,
    member: groupMembers(g, users, groups).map((i) => userDn(`user${i}`)),
  };
}

/** One LDIF line; base64 when the value is not a SAFE-STRING (RFC 2849). */
function ldifLine(attr: string, value: string): string {
  return /^[\x01-\x09\x0b\x0c\x0e-\x1f\x21-\x39\x3b\x3d-\x7f][\x01-\x09\x0b\x0c\x0e-\x7f]*$/.test(value) && !value.endsWith(' ')
    ? `${attr}: ${value}\n`
    : `${attr}:: ${Buffer.from(value, 'utf8').toString('base64')}\n`;
}

function ldifRecord(dn: string, attrs: Record<string, string | string[]>): string {
  let out = ldifLine('dn', dn);
  for (const [a, v] of Object.entries(attrs)) for (const x of Array.isArray(v) ? v : [v]) out += ldifLine(a, x);
  return `${out}\n`;
}

/** The directory's entries as LDIF (parents first), written in ~1 MB chunks. */
export function writeSambaLdif(path: string, baseDn: string, users: number, groups: number): void {
  const layout = sambaLayout(baseDn);
  writeChunked(path, (put) => {
    put(ldifRecord(layout.staff, { objectClass: ['top', 'organizationalUnit'], ou: 'Staff' }));
    put(ldifRecord(layout.groupsOu, { objectClass: ['top', 'organizationalUnit'], ou: 'App Groups' }));
    for (let i = 0; i < users; i++) put(ldifRecord(layout.userDn(`user${i}`), sambaUser(`user${i}`, i, layout.realm)));
    for (let g = 0; g < groups; g++) put(ldifRecord(layout.groupDn(g), sambaGroup(g, users, groups, layout.userDn)));
  });
}

/**
 * Adds the LDIF file's entries to sam.ldb (the DC stopped) as the domain Administrator, through
 * the samdb module stack (samba_dsdb), ADDS_PER_TRANSACTION adds per transaction; prints the count.
 */
const SAMDB_LOAD = `
import sys
from samba.auth import admin_session, system_session
from samba.param import LoadParm
from samba.samdb import SamDB
conf, sam, ldif, per = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
lp = LoadParm()
lp.load(conf)
sid = SamDB(url=sam, session_info=system_session(), lp=lp).get_domain_sid()
db = SamDB(url=sam, session_info=admin_session(lp, sid), lp=lp)
with open(ldif, encoding="utf-8") as f:
    text = f.read()
n = 0
db.transaction_start()
try:
    for _, msg in db.parse_ldif(text):
        db.add(msg)
        n += 1
        if n % per == 0:
            db.transaction_commit()
            db.transaction_start()
    db.transaction_commit()
except BaseException:
    db.transaction_cancel()
    raise
print(n)
`;

/** The Python samba-tool runs with (its #! line), which has Samba's bindings. */
function sambaPython(): string {
  const first = readFileSync(SAMBA_TOOL_BIN, 'utf8').split('\n', 1)[0] ?? '';
  const m = /^#!\s*(\S+)/.exec(first);
  return m?.[1] ?? '/usr/bin/python3';
}

/** Loads the benchmark's directory into a provisioned DC that has not started yet (startSambaAd's `beforeStart`). */
export async function loadSambaOffline(p: SambaProvisioned, users: number, groups: number): Promise<void> {
  const ldif = join(p.dir, 'bench-load.ldif');
  writeSambaLdif(ldif, p.baseDn, users, groups);
  try {
    const { stdout } = await execFileP(sambaPython(), ['-c', SAMDB_LOAD, p.conf, p.samLdb, ldif, String(ADDS_PER_TRANSACTION)], {
      cwd: p.dir,
      maxBuffer: 16 * 1024 * 1024,
    }).catch((e: unknown) => {
      const err = e as { stdout?: string; stderr?: string };
      throw new Error(`loading ${p.samLdb} offline failed: ${`${err.stdout ?? ''}${err.stderr ?? String(e)}`.slice(-2000)}`);
    });
    const added = Number(stdout.trim());
    if (added !== users + groups + 2)
      throw new Error(`loading ${p.samLdb} offline added ${stdout.trim()} entries, not ${users + groups + 2}`);
  } finally {
    rmSync(ldif, { force: true });
  }
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

/** The loaded directory as the running DC serves it: every object's objectGUID, each one checked present. */
export async function readSambaDirectory(ad: SambaAdHandle, users: number, groups: number): Promise<SambaDirectory> {
  const layout = sambaLayout(ad.baseDn);
  const c = new Client({ url: ad.url, timeout: 120_000 });
  try {
    await c.bind(ad.adminDn, ad.adminPassword);
    const u = await guids(c, layout.staff, '(objectClass=user)');
    const g = await guids(c, layout.groupsOu, '(objectClass=group)');
    const missing = (m: Map<string, string>, prefix: string, n: number): string[] =>
      Array.from({ length: n }, (_, i) => `${prefix}${i}`).filter((name) => !m.has(name));
    const gone = [...missing(u, 'user', users), ...missing(g, 'group', groups)];
    if (gone.length > 0) throw new Error(`the DC does not serve ${gone.length} loaded objects (${gone.slice(0, 5).join(', ')}, ...)`);
    return {
      ...layout,
      userGuid: Array.from({ length: users }, (_, i) => u.get(`user${i}`) as string),
      groupGuid: Array.from({ length: groups }, (_, k) => g.get(`group${k}`) as string),
    };
  } finally {
    await c.unbind().catch(() => undefined);
  }
}
