/**
 * syslog-ng as a test receiver: the `syslog()` source (RFC 5424, octet counting) over plain
 * TCP and TLS on 127.0.0.1, writing `<SDATA> <MSG>` per message to one file. The Debian
 * package syslog-ng-core extracted (dpkg -x) under SYSLOG_NG_ROOT (default /opt/syslog-ng).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../slapd.ts';
import { createTestCa, type TestCa } from '../test-ca.ts';
import { RealReceiver, requireBinary } from './real-receiver.ts';

export const SYSLOG_NG_ROOT = process.env['SYSLOG_NG_ROOT'] ?? '/opt/syslog-ng';
const VERSION = process.env['SYSLOG_NG_VERSION'] ?? '3.38';

export interface SyslogNg {
  receiver: RealReceiver;
  tcpPort: number;
  tlsPort: number;
  ca: TestCa;
  dir: string;
}

export async function startSyslogNg(opts: { logMsgSize?: number } = {}): Promise<SyslogNg> {
  const bin = join(SYSLOG_NG_ROOT, 'usr/sbin/syslog-ng');
  requireBinary(bin, 'extract the Debian package syslog-ng-core there (dpkg -x) or set SYSLOG_NG_ROOT');
  const dir = mkdtempSync(join(tmpdir(), 'syslog-ng-'));
  const ca = createTestCa(dir);
  const [tcpPort, tlsPort] = [await freePort(), await freePort()];
  const output = join(dir, 'out.log');
  const conf = `@version: ${VERSION}
options { stats-freq(0); log-fifo-size(10000); log-msg-size(${opts.logMsgSize ?? 65536}); };
source s_net {
  syslog(ip("127.0.0.1") port(${tcpPort}) transport("tcp") max-connections(100));
  syslog(ip("127.0.0.1") port(${tlsPort}) transport("tls") max-connections(100)
    tls(key-file("${ca.keyFile}") cert-file("${ca.certFile}") peer-verify(optional-untrusted)));
};
destination d_out { file("${output}" template("\${SDATA} \${MSG}\\n")); };
log { source(s_net); destination(d_out); };
`;
  const confFile = join(dir, 'syslog-ng.conf');
  writeFileSync(confFile, conf);
  const lib = join(SYSLOG_NG_ROOT, 'usr/lib/syslog-ng');
  const receiver = new RealReceiver({
    name: 'syslog-ng',
    bin,
    args: [
      '-F',
      '--no-caps',
      '-f',
      confFile,
      `--module-path=${join(lib, VERSION)}`,
      `--persist-file=${join(dir, 'persist')}`,
      `--pidfile=${join(dir, 'pid')}`,
      `--control=${join(dir, 'ctl')}`,
    ],
    env: { LD_LIBRARY_PATH: [lib, join(SYSLOG_NG_ROOT, 'usr/lib'), process.env['LD_LIBRARY_PATH'] ?? ''].filter(Boolean).join(':') },
    ports: [tcpPort, tlsPort],
    output,
  });
  await receiver.start();
  return { receiver, tcpPort, tlsPort, ca, dir };
}
