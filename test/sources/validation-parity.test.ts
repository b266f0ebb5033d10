/**
 * One validation for every source: the same bad values fed through the file, CSV, LDAP (real
 * slapd), SCIM (the platform simulator as a source) and Google Workspace (its simulator)
 * sources, and Entra ID (its simulator, the alternative address as `mail`), are rejected by
 * each with the same reason text, and each read goes on with the
 * good entry. The reasons are spelled out once, below.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DesiredState } from '../../src/identity/model.ts';
import { SCHEMA_USER } from '../../src/platform/scim/types.ts';
import { startSimulator, type Simulator } from '../../src/simulator/index.ts';
import { csvSourceSchema } from '../../src/sources/csv/schema.ts';
import { CsvSource } from '../../src/sources/csv/source.ts';
import { FileSource } from '../../src/sources/file/file-source.ts';
import { googleWorkspaceSourceSchema } from '../../src/sources/google/schema.ts';
import { GoogleWorkspaceSource } from '../../src/sources/google/source.ts';
import { ldapSourceSchema } from '../../src/sources/ldap/schema.ts';
import { LdapSource } from '../../src/sources/ldap/source.ts';
import { scimSourceSchema } from '../../src/sources/scim/schema.ts';
import { ScimSource } from '../../src/sources/scim/source.ts';
import { startTestWorkspace, type TestWorkspace } from '../helpers/google-workspace.ts';
import { entraIdSourceSchema } from '../../src/sources/entra/schema.ts';
import { EntraIdSource } from '../../src/sources/entra/source.ts';
import { startTestTenant, type TestTenant } from '../helpers/entra-tenant.ts';
import type { LdifEntry } from '../helpers/ldif.ts';
import { PEOPLE, SUFFIX } from '../helpers/ldap-fixture.ts';
import { startSlapd, type SlapdHandle } from '../helpers/slapd.ts';

/** One person as every source can carry it: the display name is given + family, as Google builds it. */
interface Person {
  userName: string;
  givenName: string;
  familyName: string;
  /** Second address (the first is the userName). */
  alt?: string;
}

const LONG = 'A'.repeat(260);

/** Each bad value, and the one reason every source must give for it. */
const CASES: { what: string; person: Person; reason: string }[] = [
  {
    what: 'an e-mail with spaces',
    person: { userName: 'kurt@example.com', givenName: 'Kurt', familyName: 'Gray', alt: 'kurt at ldap.example' },
    reason: 'emails "kurt at ldap.example": not an e-mail address (white space, U+0020); expected one like alice@example.com',
  },
  {
    what: 'an e-mail with two @',
    person: { userName: 'cleo@example.com', givenName: 'Cleo', familyName: 'Hart', alt: 'cleo@@ldap' },
    reason: 'emails "cleo@@ldap": not an e-mail address (more than one @); expected one like alice@example.com',
  },
  {
    what: 'an e-mail without a dot in the domain',
    person: { userName: 'dora@example.com', givenName: 'Dora', familyName: 'Iles', alt: 'dora@ldap' },
    reason: 'emails "dora@ldap": not an e-mail address (no dot in the domain); expected one like alice@example.com',
  },
  {
    what: 'a control character in a name',
    person: { userName: 'ann@example.com', givenName: 'Ann', familyName: 'Smith\u0007' },
    reason: 'displayName "Ann Smith\\u{7}": contains a control character (U+0007)',
  },
  {
    what: 'a right-to-left override in a name',
    person: { userName: 'eve@example.com', givenName: 'Eve\u202Eliam', familyName: 'Jones' },
    reason:
      'displayName "Eve\\u{202E}liam Jones": contains a bidirectional formatting character (U+202E), which can make it read as another name',
  },
  {
    what: 'a zero-width space in the userName',
    person: { userName: 'zw\u200Bsp@example.com', givenName: 'Zed', familyName: 'West' },
    reason: 'userName "zw\\u{200B}sp@example.com": contains an invisible character (U+200B), which can make it read as another name',
  },
  {
    what: 'a right-to-left isolate in the userName',
    person: { userName: 'adm\u2067in@example.com', givenName: 'Adam', familyName: 'Ince' },
    reason:
      'userName "adm\\u{2067}in@example.com": contains a bidirectional formatting character (U+2067), which can make it read as another name',
  },
  {
    what: 'an overlong name',
    person: { userName: 'long@example.com', givenName: LONG, familyName: 'Lee' },
    reason: `displayName "${'A'.repeat(80)}…": longer than 256 characters (264)`,
  },
];

const GOOD: Person = { userName: 'good@example.com', givenName: 'Good', familyName: 'Person' };
/** One name twice: precomposed (NFC) and decomposed (NFD). Exactly one is kept. */
const JOSE: Person[] = [
  { userName: 'jos\u00e9@example.com', givenName: 'Jos\u00e9', familyName: 'Nu\u00f1ez' },
  { userName: 'jose\u0301@example.com', givenName: 'Jose\u0301', familyName: 'Nun\u0303ez' },
];
const PEOPLE_IN = [GOOD, ...CASES.map((c) => c.person), ...JOSE];
const scimIds: string[] = [];
const displayName = (p: Person): string => `${p.givenName} ${p.familyName}`;
const emails = (p: Person): string[] => [p.userName, ...(p.alt ? [p.alt] : [])];

const dir = mkdtempSync(join(tmpdir(), 'parity-'));
let slapd: SlapdHandle;
let scimSim: Simulator;
let google: TestWorkspace;
let entra: TestTenant;

async function readFile(): Promise<DesiredState> {
  const users = PEOPLE_IN.map((p, i) => ({
    externalId: `p-${i}`,
    userName: p.userName,
    givenName: p.givenName,
    familyName: p.familyName,
    displayName: displayName(p),
    emails: emails(p),
  }));
  writeFileSync(join(dir, 'directory.yaml'), stringify({ users, groups: [] }));
  return new FileSource({ type: 'file', path: 'directory.yaml' }, { configDir: dir }).read();
}

async function readCsv(): Promise<DesiredState> {
  const cell = (v: string): string => `"${v.replaceAll('"', '""')}"`;
  const rows = PEOPLE_IN.map((p, i) => [`p-${i}`, p.userName, p.givenName, p.familyName, displayName(p), p.alt ?? ''].map(cell).join(','));
  writeFileSync(join(dir, 'hr.csv'), ['id,login,first,last,display,alt', ...rows].join('\n'));
  const cfg = csvSourceSchema.parse({
    type: 'csv',
    path: 'hr.csv',
    columns: {
      externalId: 'id',
      userName: 'login',
      givenName: 'first',
      familyName: 'last',
      displayName: 'display',
      emails: ['login', 'alt'],
    },
  });
  return new CsvSource(cfg, { configDir: dir }).read();
}

async function readLdap(): Promise<DesiredState> {
  const cfg = ldapSourceSchema.parse({
    type: 'ldap',
    url: slapd.url,
    allowInsecure: true,
    bindDn: slapd.readerDn,
    bindPassword: slapd.readerPassword,
    timeoutSeconds: 10,
    connectTimeoutSeconds: 2,
    users: { baseDn: PEOPLE },
  });
  return new LdapSource(cfg, { configDir: dir }).read();
}

async function readScim(): Promise<DesiredState> {
  const cfg = scimSourceSchema.parse({
    type: 'scim',
    baseUrl: scimSim.url,
    token: 'parity-token',
    scimPath: '/api/scim/v2',
    allowInsecureHttp: true,
  });
  return new ScimSource(cfg, { configDir: dir }).read();
}

async function readGoogle(): Promise<DesiredState> {
  return new GoogleWorkspaceSource(googleWorkspaceSourceSchema.parse(google.source()), { configDir: google.dir }).read();
}

async function readEntra(): Promise<DesiredState> {
  const s = new EntraIdSource(entraIdSourceSchema.parse(entra.source({ groups: false })), { configDir: entra.dir });
  return s.read().finally(() => s.close());
}

beforeAll(async () => {
  const entries: LdifEntry[] = [
    { dn: PEOPLE, attrs: { objectClass: 'organizationalUnit', ou: 'people' } },
    ...PEOPLE_IN.map((p, i) => ({
      // The RDN is not a name under test, so every value below is as the source holds it.
      dn: `employeeNumber=${i},${PEOPLE}`,
      attrs: {
        objectClass: 'inetOrgPerson',
        employeeNumber: String(i),
        uid: p.userName,
        cn: displayName(p),
        givenName: p.givenName,
        sn: p.familyName,
        mail: emails(p),
      },
    })),
  ];
  slapd = await startSlapd({ entries, suffix: SUFFIX });

  scimSim = await startSimulator({ tokens: [{ token: 'parity-token' }] });
  for (const p of PEOPLE_IN) {
    const created = scimSim.store.createUser({
      schemas: [SCHEMA_USER],
      userName: p.userName,
      name: { givenName: p.givenName, familyName: p.familyName },
      displayName: displayName(p),
      emails: emails(p).map((value, i) => ({ value, ...(i === 0 ? { primary: true } : {}) })),
      active: true,
    });
    scimIds.push(created.id);
  }

  google = await startTestWorkspace();
  for (const p of PEOPLE_IN) {
    const u = google.sim.workspace.addUser({ primaryEmail: p.userName, givenName: p.givenName, familyName: p.familyName });
    if (p.alt) u.emails = [...(u.emails ?? []), { address: p.alt }];
  }

  entra = await startTestTenant();
  for (const p of PEOPLE_IN)
    entra.sim.directory.addUser({
      userPrincipalName: p.userName,
      givenName: p.givenName,
      surname: p.familyName,
      displayName: displayName(p),
      mail: p.alt ?? p.userName,
    });
}, 60_000);

afterAll(async () => {
  await Promise.all([slapd?.stop(), scimSim?.close(), google?.close(), entra?.close()]);
});

const SOURCES: [string, () => Promise<DesiredState>][] = [
  ['file', readFile],
  ['csv', readCsv],
  ['ldap', readLdap],
  ['scim', readScim],
  ['google-workspace', readGoogle],
  ['entra-id', readEntra],
];

describe('one validation for every source', () => {
  it.each(SOURCES)('%s: each bad value is rejected with the shared reason, the good entry is kept', async (_name, read) => {
    const state = await read();
    const reasonOf = (userName: string): string | undefined =>
      state.rejected.find((r) => r.kind !== 'group' && r.userName?.normalize('NFC') === userName)?.reason;
    expect(CASES.map((c) => [c.what, reasonOf(c.person.userName)])).toEqual(CASES.map((c) => [c.what, c.reason]));
    expect(state.users.map((u) => u.userName)).toContain(GOOD.userName);
    expect(state.users.map((u) => u.userName)).not.toEqual(expect.arrayContaining(CASES.map((c) => c.person.userName)));
  });
});

/** Where each source says the entry at `i` of PEOPLE_IN is. */
const REF: Record<string, (i: number) => string> = {
  file: (i) => `users[${i}] (externalId p-${i})`,
  csv: (i) => `${join(dir, 'hr.csv')}:${i + 2}`,
  ldap: (i) => `employeeNumber=${i},${PEOPLE}`,
  scim: (i) => `Users/${scimIds[i]}`,
  'google-workspace': (i) => (PEOPLE_IN[i] as Person).userName.normalize('NFC'),
  'entra-id': (i) => (PEOPLE_IN[i] as Person).userName.normalize('NFC'),
};

describe('duplicates in every source', () => {
  it.each(SOURCES)('%s: NFC and NFD spellings of one name are one user, the later rejected naming the kept entry', async (name, read) => {
    const state = await read();
    const [nfcAt, nfdAt] = JOSE.map((p) => PEOPLE_IN.indexOf(p)) as [number, number];
    const kept = state.users.filter((u) => u.userName.normalize('NFD') === 'jose\u0301@example.com');
    expect(kept).toHaveLength(1);
    // Each source reads in its own order (Google lists by e-mail): the first it read is kept.
    const nfdRejected = state.rejected.some((r) => r.userName === JOSE[1]?.userName);
    const [keptIdx, rejectedIdx] = nfdRejected ? [nfcAt, nfdAt] : [nfdAt, nfcAt];
    const rejectedName = (PEOPLE_IN[rejectedIdx] as Person).userName;
    // The kept entry's name is quoted as it is written: in NFC.
    const keptName = (PEOPLE_IN[keptIdx] as Person).userName.normalize('NFC');
    expect(state.rejected.filter((r) => r.userName?.normalize('NFD') === 'jose\u0301@example.com')).toEqual([
      expect.objectContaining({
        userName: rejectedName,
        reason: `duplicate userName "${rejectedName}" (the same name as "${keptName}" after Unicode normalization and case folding): already used by ${REF[name]?.(keptIdx)}; the first entry is kept`,
      }),
    ]);
    // What is kept is written in NFC, whichever spelling came first.
    expect(kept[0]?.userName).toBe('jos\u00e9@example.com');
  });
});
