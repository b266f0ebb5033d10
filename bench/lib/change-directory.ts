/**
 * The directory a change benchmark drives: started and loaded, its LDAP source config for the
 * tool, a change driver for it, the directory server's pid (for its idle CPU) and what its change
 * mechanism cannot see.
 *
 * - slapd: bench/lib/ldap-directory.ts bulk-loaded offline with slapadd (back_mdb), the
 *   openldap preset with `disabled: { attribute: employeeType, values: [terminated] }`;
 *   deletions are invisible to the modifyTimestamp reader (no tombstones);
 * - samba: a Samba AD domain controller (test/helpers/samba-ad.ts) loaded offline into its
 *   sam.ldb before it starts (bench/lib/samba-directory.ts), the active-directory preset; deletions are seen through
 *   the Show Deleted control.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startSambaAd } from '../../test/helpers/samba-ad.ts';
import { startSlapd } from '../../test/helpers/slapd.ts';
import type { ChangeDriver } from './change-plan.ts';
import { LdapChangeDriver } from './ldap-change-driver.ts';
import { GROUPS, PEOPLE, ldifEntries, membershipCount } from './ldap-directory.ts';
import { SambaChangeDriver } from './samba-change-driver.ts';
import { loadSambaOffline, readSambaDirectory } from './samba-directory.ts';

export type DirectoryKind = 'slapd' | 'samba';

export interface ChangeDirectory {
  kind: DirectoryKind;
  /** One sentence for the results: server, size, how it was loaded and in how long. */
  description: string;
  loadMs: number;
  /** The LDAP source config, without `changes` (defaults) and with the bind password in `passwordFile`. */
  source(passwordFile: string): Record<string, unknown>;
  password: string;
  driver(): ChangeDriver;
  /** The directory server's process, for its CPU while the tool idles; undefined when unknown. */
  serverPid(): number | undefined;
  /** Deleted entries are invisible to the change mechanism (left to the full reconcile). */
  deletesBlind: boolean;
  stop(): Promise<void>;
}

const CHANGE_INDEX = 'modifyTimestamp,createTimestamp,member eq';

const n0 = (x: number): string => Math.round(x).toLocaleString('en-US');

export async function startChangeDirectory(kind: DirectoryKind, users: number, groups: number): Promise<ChangeDirectory> {
  const t = performance.now();
  const shape = `${n0(users)} users + ${n0(groups)} groups (${n0(membershipCount(users, groups))} memberships)`;
  if (kind === 'slapd') {
    // The indexes docs/sources.md recommends for modify-timestamp polling: each poll's range
    // filter, and each parent-group search of a changed group, reads an index, not every entry.
    const sl = await startSlapd({ entries: ldifEntries(users, groups), sizeLimit: 1000, indexes: [CHANGE_INDEX] });
    const loadMs = performance.now() - t;
    return {
      kind,
      loadMs,
      description: `slapd (back_mdb) with ${shape}, bulk-loaded offline with slapadd in ${(loadMs / 1000).toFixed(1)} s, \`index ${CHANGE_INDEX}\``,
      password: sl.readerPassword,
      source: (passwordFile) => ({
        type: 'ldap',
        url: sl.url,
        allowInsecure: true,
        bindDn: sl.readerDn,
        bindPasswordFile: passwordFile,
        pageSize: 1000,
        users: { baseDn: PEOPLE, attributes: { extra: { department: 'departmentNumber' } } },
        groups: { baseDn: GROUPS },
        disabled: { attribute: 'employeeType', values: ['terminated'] },
      }),
      driver: () => new LdapChangeDriver(sl.url, sl.adminDn, sl.adminPassword, users, groups),
      serverPid: () => {
        try {
          return Number(readFileSync(join(sl.dir, 'slapd.pid'), 'utf8').trim());
        } catch {
          return undefined;
        }
      },
      deletesBlind: true,
      stop: () => sl.stop(),
    };
  }
  let offlineMs = 0;
  const ad = await startSambaAd({
    beforeStart: async (p) => {
      const t0 = performance.now();
      await loadSambaOffline(p, users, groups);
      offlineMs = performance.now() - t0;
    },
  });
  try {
    const dir = await readSambaDirectory(ad, users, groups);
    const loadMs = performance.now() - t;
    return {
      kind,
      loadMs,
      description: `Samba AD domain controller (samba-tool provision, LDAP service only) with ${shape}, loaded offline into its sam.ldb through Samba's module stack (SamDB as the domain Administrator) in ${(offlineMs / 1000).toFixed(1)} s, provisioned, loaded and started in ${(loadMs / 1000).toFixed(1)} s`,
      password: ad.adminPassword,
      source: (passwordFile) => ({
        type: 'ldap',
        preset: 'active-directory',
        url: ad.url,
        allowInsecure: true,
        bindDn: ad.adminDn,
        bindPasswordFile: passwordFile,
        pageSize: 1000,
        users: { baseDn: dir.staff, attributes: { extra: { department: 'department' } } },
        groups: { baseDn: dir.groupsOu },
      }),
      driver: () => new SambaChangeDriver(ad.url, ad.adminDn, ad.adminPassword, dir),
      serverPid: () => undefined,
      deletesBlind: false,
      stop: () => ad.stop(),
    };
  } catch (e) {
    await ad.stop();
    throw e;
  }
}
