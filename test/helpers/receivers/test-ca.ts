/**
 * A throw-away CA and a server certificate for 127.0.0.1/localhost, made with the openssl
 * CLI (EC P-256 keys: fast). A second, unrelated CA lets tests prove verification fails.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestPki {
  dir: string;
  caFile: string;
  otherCaFile: string;
  serverKey: string;
  serverCert: string;
}

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: 'pipe' });
}

function makeCa(dir: string, name: string): void {
  openssl(['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', `${name}.key`], dir);
  openssl(['req', '-x509', '-new', '-key', `${name}.key`, '-sha256', '-days', '2', '-subj', `/CN=${name}`, '-out', `${name}.pem`], dir);
}

export function makeTestPki(): TestPki {
  const dir = mkdtempSync(join(tmpdir(), 'sink-pki-'));
  makeCa(dir, 'test-ca');
  makeCa(dir, 'other-ca');
  openssl(['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', 'server.key'], dir);
  openssl(['req', '-new', '-key', 'server.key', '-subj', '/CN=localhost', '-out', 'server.csr'], dir);
  writeFileSync(join(dir, 'server.ext'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n');
  openssl(
    [
      'x509',
      '-req',
      '-in',
      'server.csr',
      '-CA',
      'test-ca.pem',
      '-CAkey',
      'test-ca.key',
      '-CAcreateserial',
      '-days',
      '2',
      '-sha256',
      '-extfile',
      'server.ext',
      '-out',
      'server.pem',
    ],
    dir,
  );
  return {
    dir,
    caFile: join(dir, 'test-ca.pem'),
    otherCaFile: join(dir, 'other-ca.pem'),
    serverKey: readFileSync(join(dir, 'server.key'), 'utf8'),
    serverCert: readFileSync(join(dir, 'server.pem'), 'utf8'),
  };
}
