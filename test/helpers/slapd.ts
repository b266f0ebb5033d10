/**
 * A private slapd for tests and benchmarks: temp directory, generated slapd.conf (back_mdb,
 * core/cosine/inetorgperson/nis schemas), entries bulk-loaded with slapadd before start, a
 * free port, optional StartTLS/ldaps with a throw-away CA. The system slapd service is never
 * used. A size limit (1,000 like AD) applies to the read-only bind account, so an unpaged
 * search would be capped; paged searches may read past it (size.prtotal=unlimited).
 *
 * Needs: /usr/sbin/slapd and /usr/sbin/slapadd (Debian: `apt-get install slapd ldap-utils`),
 * /usr/lib/ldap/back_mdb.so, /etc/ldap/schema/*.schema, and the `openssl` CLI for TLS.
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { LdapSourceInput } from '../../src/sources/ldap/schema.ts';
import { createTestCa } from './test-ca.ts';
import { toLdif, type LdifEntry } from './ldif.ts';

const execFileP = promisify(execFile);

export const SLAPD_BIN = process.env['SLAPD_BIN'] ?? '/usr/sbin/slapd';
export const SLAPADD_BIN = process.env['SLAPADD_BIN'] ?? '/usr/sbin/slapadd';
const MODULE_DIR = process.env['SLAPD_MODULE_DIR'] ?? '/usr/lib/ldap';
const SCHEMA_DIR = process.env['SLAPD_SCHEMA_DIR'] ?? '/etc/ldap/schema';

/**
 * Active Directory attributes on OpenLDAP (private test OIDs), so the AD preset's objectGUID
 * decoding and userAccountControl rule run against a real server.
 */
export const AD_TEST_SCHEMA = `
attributetype ( 1.3.6.1.4.1.55555.1.1 NAME 'objectGUID' EQUALITY octetStringMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.40 SINGLE-VALUE )
attributetype ( 1.3.6.1.4.1.55555.1.2 NAME 'userAccountControl' EQUALITY integerMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.27 SINGLE-VALUE )
attributetype ( 1.3.6.1.4.1.55555.1.3 NAME 'sAMAccountName' EQUALITY caseIgnoreMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.15 SINGLE-VALUE )
attributetype ( 1.3.6.1.4.1.55555.1.4 NAME 'userPrincipalName' EQUALITY caseIgnoreMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.15 SINGLE-VALUE )
objectclass ( 1.3.6.1.4.1.55555.2.1 NAME 'adTestObject' AUXILIARY MAY ( objectGUID $ userAccountControl $ sAMAccountName $ userPrincipalName ) )
`;

export interface SlapdOptions {
  /** Entries below the suffix; the suffix entry and the bind accounts are added here. */
  entries: Iterable<LdifEntry>;
  suffix?: string;
  /** Size limit for the bind account (unpaged searches are capped at this). */
  sizeLimit?: number;
  tls?: boolean;
  /** Extra schema text in slapd.conf syntax, e.g. AD_TEST_SCHEMA. */
  schema?: string;
  /** Extra `index` directives beyond `objectClass eq`, e.g. `modifyTimestamp,createTimestamp eq`. */
  indexes?: string[];
}

export interface SlapdHandle {
  url: string;
  /** Only with `tls: true`. */
  ldapsUrl: string | undefined;
  caFile: string | undefined;
  suffix: string;
  /** Read-only account subject to the size limit (what the source binds as). */
  readerDn: string;
  readerPassword: string;
  /** rootdn: unlimited, used by tests to change the directory. */
  adminDn: string;
  adminPassword: string;
  dir: string;
  stop(): Promise<void>;
}

/**
 * An LDAP source over this slapd without TLS, bound as the reader account (its password inline,
 * or `bindPasswordFile` instead), users under `people`, groups under `groups`, and people with
 * `employeeType: disabled` read as disabled. `over` replaces top-level keys.
 */
export function slapdSourceConfig(
  sl: SlapdHandle,
  at: { people: string; groups: string; bindPasswordFile?: string },
  over: Partial<LdapSourceInput> = {},
): LdapSourceInput {
  return {
    type: 'ldap',
    url: sl.url,
    allowInsecure: true,
    bindDn: sl.readerDn,
    ...(at.bindPasswordFile === undefined ? { bindPassword: sl.readerPassword } : { bindPasswordFile: at.bindPasswordFile }),
    timeoutSeconds: 10,
    connectTimeoutSeconds: 2,
    users: { baseDn: at.people },
    groups: { baseDn: at.groups },
    disabled: { attribute: 'employeeType', values: ['disabled'] },
    ...over,
  };
}

export function slapdAvailable(): boolean {
  return existsSync(SLAPD_BIN) && existsSync(SLAPADD_BIN) && existsSync(join(MODULE_DIR, 'back_mdb.so'));
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** Whether something accepts TCP connections on 127.0.0.1:port. */
export function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createConnection({ host: '127.0.0.1', port });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

function slapdConf(
  dir: string,
  suffix: string,
  sizeLimit: number,
  tls: { certFile: string; keyFile: string; caFile: string } | undefined,
  hasSchema: boolean,
  indexes: readonly string[],
): string {
  const schemas = ['core', 'cosine', 'inetorgperson', 'nis'].map((s) => `include ${SCHEMA_DIR}/${s}.schema`);
  if (hasSchema) schemas.push(`include ${join(dir, 'extra.schema')}`);
  return [
    ...schemas,
    `modulepath ${MODULE_DIR}`,
    'moduleload back_mdb',
    `pidfile ${join(dir, 'slapd.pid')}`,
    `argsfile ${join(dir, 'slapd.args')}`,
    ...(tls ? [`TLSCACertificateFile ${tls.caFile}`, `TLSCertificateFile ${tls.certFile}`, `TLSCertificateKeyFile ${tls.keyFile}`] : []),
    'database mdb',
    `suffix "${suffix}"`,
    `rootdn "cn=admin,${suffix}"`,
    'rootpw admin-secret',
    `directory ${join(dir, 'db')}`,
    'maxsize 4294967296',
    'index objectClass eq',
    ...indexes.map((i) => `index ${i}`),
    // Capped like AD's MaxPageSize for plain searches; paged searches may read everything.
    `limits users size.soft=${sizeLimit} size.hard=${sizeLimit} size.prtotal=unlimited`,
    `limits anonymous size.soft=${sizeLimit} size.hard=${sizeLimit} size.prtotal=unlimited`,
    'access to attrs=userPassword by anonymous auth by * none',
    'access to * by users read by * none',
    '',
  ].join('\n');
}

export async function startSlapd(opts: SlapdOptions): Promise<SlapdHandle> {
  if (!slapdAvailable())
    throw new Error(`slapd not found (${SLAPD_BIN}, ${SLAPADD_BIN}, ${MODULE_DIR}/back_mdb.so): apt-get install slapd ldap-utils`);
  const suffix = opts.suffix ?? 'dc=example,dc=org';
  const dir = mkdtempSync(join(tmpdir(), 'slapd-test-'));
  mkdirSync(join(dir, 'db'));
  const tls = opts.tls ? createTestCa(dir) : undefined;
  if (opts.schema) writeFileSync(join(dir, 'extra.schema'), opts.schema);
  const conf = join(dir, 'slapd.conf');
  writeFileSync(conf, slapdConf(dir, suffix, opts.sizeLimit ?? 1000, tls, opts.schema !== undefined, opts.indexes ?? []));

  const dc = /^dc=([^,]+)/i.exec(suffix)?.[1] ?? 'example';
  const base: LdifEntry[] = [
    { dn: suffix, attrs: { objectClass: ['dcObject', 'organization'], o: 'Test', dc } },
    { dn: `cn=reader,${suffix}`, attrs: { objectClass: ['person'], cn: 'reader', sn: 'reader', userPassword: 'reader-secret' } },
  ];
  const ldifFile = join(dir, 'data.ldif');
  writeFileSync(ldifFile, toLdif(base));
  // Stream large directories to disk in chunks instead of one giant string.
  let chunk: LdifEntry[] = [];
  for (const e of opts.entries) {
    chunk.push(e);
    if (chunk.length >= 2000) {
      appendFileSync(ldifFile, toLdif(chunk));
      chunk = [];
    }
  }
  if (chunk.length) appendFileSync(ldifFile, toLdif(chunk));
  try {
    await execFileP(SLAPADD_BIN, ['-f', conf, '-l', ldifFile, '-q'], { maxBuffer: 16 * 1024 * 1024 });
  } catch (e) {
    const stderr = (e as { stderr?: string }).stderr ?? String(e);
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`slapadd failed: ${stderr.slice(-2000)}`);
  }

  const port = await freePort();
  const tlsPort = tls ? await freePort() : undefined;
  const urls = [`ldap://127.0.0.1:${port}/`, ...(tlsPort ? [`ldaps://127.0.0.1:${tlsPort}/`] : [])];
  // -d 0: stay in the foreground so the child can be killed; no debug output.
  const child: ChildProcess = spawn(SLAPD_BIN, ['-h', urls.join(' '), '-f', conf, '-d', '0'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  let exited = false;
  child.once('exit', () => (exited = true));

  const stop = async (): Promise<void> => {
    if (!exited) {
      const gone = new Promise<void>((r) => child.once('exit', () => r()));
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 3000);
      await gone;
      clearTimeout(t);
    }
    rmSync(dir, { recursive: true, force: true });
  };

  const deadline = Date.now() + 15_000;
  for (;;) {
    if (exited) {
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`slapd exited during start-up: ${stderr.trim()}`);
    }
    if ((await canConnect(port)) && (tlsPort === undefined || (await canConnect(tlsPort)))) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`slapd did not accept connections on port ${port} within 15s: ${stderr.trim()}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }

  return {
    url: `ldap://127.0.0.1:${port}`,
    ldapsUrl: tlsPort ? `ldaps://127.0.0.1:${tlsPort}` : undefined,
    caFile: tls?.caFile,
    suffix,
    readerDn: `cn=reader,${suffix}`,
    readerPassword: 'reader-secret',
    adminDn: `cn=admin,${suffix}`,
    adminPassword: 'admin-secret',
    dir,
    stop,
  };
}
