/**
 * A private Samba Active Directory domain controller for tests: provisioned with samba-tool in
 * a temp dir (no DNS, RFC 2307 attributes), started in the foreground as a child process
 * (`samba -i -M single`) running the LDAP service only, on the loopback interface. AD's LDAP
 * port is fixed at 389 and Samba binds only addresses configured on an interface, so one DC
 * runs at a time: a port already taken fails the start with that reason.
 * Simple binds without TLS are allowed (`ldap server require strong auth = no`): loopback only.
 * `beforeStart` runs between provisioning and the start, e.g. to load entries offline into the
 * DC's sam.ldb (bench/lib/samba-directory.ts).
 *
 * Needs: /usr/sbin/samba and /usr/bin/samba-tool (Debian: `apt-get install samba`), run as root.
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'ldapts';

const execFileP = promisify(execFile);

export const SAMBA_BIN = process.env['SAMBA_BIN'] ?? '/usr/sbin/samba';
export const SAMBA_TOOL_BIN = process.env['SAMBA_TOOL_BIN'] ?? '/usr/bin/samba-tool';

export interface SambaAdHandle {
  /** `ldap://127.x.y.z:389` */
  url: string;
  host: string;
  /** The domain naming context, `DC=test,DC=example`. */
  baseDn: string;
  adminDn: string;
  adminPassword: string;
  dir: string;
  stop(): Promise<void>;
}

export function sambaAvailable(): boolean {
  return existsSync(SAMBA_BIN) && existsSync(SAMBA_TOOL_BIN);
}

function reachable(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createConnection({ host, port });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

async function bindable(url: string, dn: string, password: string): Promise<boolean> {
  const c = new Client({ url, connectTimeout: 2000, timeout: 5000 });
  try {
    await c.bind(dn, password);
    await c.search('', { scope: 'base', filter: '(objectClass=*)', attributes: ['highestCommittedUSN'] });
    return true;
  } catch {
    return false;
  } finally {
    await c.unbind().catch(() => undefined);
  }
}

/** The provisioned DC before it starts: its files, for an offline load into its sam.ldb. */
export interface SambaProvisioned {
  dir: string;
  /** The DC's smb.conf. */
  conf: string;
  /** `<dir>/private/sam.ldb` */
  samLdb: string;
  baseDn: string;
}

export async function startSambaAd(
  opts: { realm?: string; domain?: string; beforeStart?: (p: SambaProvisioned) => Promise<void> } = {},
): Promise<SambaAdHandle> {
  if (!sambaAvailable()) throw new Error(`samba not found (${SAMBA_BIN}, ${SAMBA_TOOL_BIN}): apt-get install samba`);
  const realm = opts.realm ?? 'TEST.EXAMPLE';
  const domain = opts.domain ?? 'TEST';
  const baseDn = realm
    .toLowerCase()
    .split('.')
    .map((p) => `DC=${p}`)
    .join(',');
  const adminPassword = 'Adm1n-Test-Passw0rd';
  const host = '127.0.0.1';
  if (await reachable(host, 389)) throw new Error(`${host}:389 is already taken: another LDAP server (or Samba DC) is running`);
  const dir = mkdtempSync(join(tmpdir(), 'samba-ad-'));
  const conf = join(dir, 'etc', 'smb.conf');
  try {
    await execFileP(
      SAMBA_TOOL_BIN,
      [
        'domain',
        'provision',
        `--targetdir=${dir}`,
        `--realm=${realm}`,
        `--domain=${domain}`,
        '--server-role=dc',
        '--use-rfc2307',
        '--dns-backend=NONE',
        `--adminpass=${adminPassword}`,
        '--host-name=dc1',
        '--option=interfaces = lo',
        '--option=bind interfaces only = yes',
      ],
      { cwd: dir, maxBuffer: 16 * 1024 * 1024, timeout: 180_000 },
    );
  } catch (e) {
    const out = `${(e as { stdout?: string }).stdout ?? ''}${(e as { stderr?: string }).stderr ?? String(e)}`;
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`samba-tool domain provision failed: ${out.slice(-2000)}`);
  }
  // The LDAP service alone, logs in the temp dir, simple binds without TLS (loopback test only).
  const text = readFileSync(conf, 'utf8')
    .replace(/^\s*server services = .*$/m, '')
    .replace(/^\s*log file = .*$/m, '');
  writeFileSync(conf, text);
  appendFileSync(
    conf,
    ['', '[global]', '\tserver services = ldap', '\tldap server require strong auth = no', `\tlog file = ${join(dir, 'log.%m')}`, ''].join(
      '\n',
    ),
  );
  if (opts.beforeStart)
    try {
      await opts.beforeStart({ dir, conf, samLdb: join(dir, 'private', 'sam.ldb'), baseDn });
    } catch (e) {
      rmSync(dir, { recursive: true, force: true });
      throw e;
    }

  const child: ChildProcess = spawn(SAMBA_BIN, ['-i', '-M', 'single', '-s', conf], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (d: Buffer): void => {
    output = (output + d.toString()).slice(-4000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  let exited = false;
  child.once('exit', () => {
    exited = true;
  });

  const stop = async (): Promise<void> => {
    if (!exited) {
      const gone = new Promise<void>((r) => child.once('exit', () => r()));
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 5000);
      await gone;
      clearTimeout(t);
    }
    rmSync(dir, { recursive: true, force: true });
  };

  const url = `ldap://${host}:389`;
  const adminDn = `CN=Administrator,CN=Users,${baseDn}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (exited) {
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`samba exited during start-up: ${output.trim()}`);
    }
    if ((await reachable(host, 389)) && (await bindable(url, adminDn, adminPassword))) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`samba did not answer LDAP on ${url} within 60s: ${output.trim()}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return { url, host, baseDn, adminDn, adminPassword, dir, stop };
}
