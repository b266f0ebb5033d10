/**
 * Debian's rsyslog as a test receiver: imtcp (plain), imtcp with the gtls driver (TLS, the
 * test CA's localhost certificate) and imrelp, all on 127.0.0.1, writing every message raw
 * (`%rawmsg%`) to one file. Needs the packages rsyslog, rsyslog-gnutls and rsyslog-relp;
 * RSYSLOGD overrides the binary's path.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../slapd.ts';
import { createTestCa, type TestCa } from '../test-ca.ts';
import { RealReceiver, requireBinary } from './real-receiver.ts';

export const RSYSLOGD = process.env['RSYSLOGD'] ?? '/usr/sbin/rsyslogd';

export interface RsyslogOptions {
  /** rsyslog's maxMessageSize (its default is 8k). */
  maxMessageSize?: number;
}

export interface Rsyslog {
  receiver: RealReceiver;
  tcpPort: number;
  tlsPort: number;
  relpPort: number;
  /**
   * imrelp with tls="on": librelp then wants a client certificate (its anonymous mode is
   * anonymous Diffie-Hellman, which Node's TLS does not offer); any the test CA signed passes.
   */
  relpTlsPort: number;
  ca: TestCa;
  dir: string;
}

export async function startRsyslog(opts: RsyslogOptions = {}): Promise<Rsyslog> {
  requireBinary(RSYSLOGD, 'install the Debian packages rsyslog, rsyslog-gnutls and rsyslog-relp (or set RSYSLOGD)');
  const dir = mkdtempSync(join(tmpdir(), 'rsyslog-'));
  mkdirSync(join(dir, 'work'));
  const ca = createTestCa(dir);
  const [tcpPort, tlsPort, relpPort, relpTlsPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const output = join(dir, 'out.log');
  const conf = `
global(workDirectory="${join(dir, 'work')}" maxMessageSize="${opts.maxMessageSize ?? 8192}"
       defaultNetstreamDriverCAFile="${ca.caFile}" defaultNetstreamDriverCertFile="${ca.certFile}"
       defaultNetstreamDriverKeyFile="${ca.keyFile}")
module(load="imtcp")
input(type="imtcp" address="127.0.0.1" port="${tcpPort}")
input(type="imtcp" address="127.0.0.1" port="${tlsPort}" streamDriver.name="gtls" streamDriver.mode="1" streamDriver.authMode="anon")
module(load="imrelp")
input(type="imrelp" address="127.0.0.1" port="${relpPort}")
input(type="imrelp" address="127.0.0.1" port="${relpTlsPort}" tls="on" tls.caCert="${ca.caFile}"
      tls.myCert="${ca.certFile}" tls.myPrivKey="${ca.keyFile}" tls.authMode="certvalid")
template(name="raw" type="string" string="%rawmsg%\\n")
action(type="omfile" file="${output}" template="raw")
`;
  const confFile = join(dir, 'rsyslog.conf');
  writeFileSync(confFile, conf);
  const receiver = new RealReceiver({
    name: 'rsyslogd',
    bin: RSYSLOGD,
    args: ['-n', '-f', confFile, '-i', join(dir, 'rsyslogd.pid')],
    ports: [tcpPort, tlsPort, relpPort, relpTlsPort],
    output,
  });
  await receiver.start();
  return { receiver, tcpPort, tlsPort, relpPort, relpTlsPort, ca, dir };
}
