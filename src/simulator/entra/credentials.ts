/**
 * Credentials for simulated app registrations: a client secret, a self-signed certificate
 * (made with the `openssl` CLI; Node has no X.509 writer) and a workload identity issuer
 * whose key signs Kubernetes-style service account tokens.
 */
import { execFileSync } from 'node:child_process';
import { generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A secret shaped like Entra's (40 characters, `~` in fourth place). */
export function generateClientSecret(): string {
  const raw = randomBytes(30).toString('base64url').slice(0, 37);
  return `${raw.slice(0, 3)}8Q~${raw.slice(3)}`;
}

/** A self-signed RSA certificate and its key, as one PEM (key first), the form the source reads. */
export function generateCertificate(cn = 'scim-audit-sync'): { pem: string; certPem: string } {
  const dir = mkdtempSync(join(tmpdir(), 'entra-cert-'));
  try {
    execFileSync(
      'openssl',
      ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'key.pem', '-out', 'cert.pem', '-days', '2', '-subj', `/CN=${cn}`],
      { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    const key = readFileSync(join(dir, 'key.pem'), 'utf8');
    const certPem = readFileSync(join(dir, 'cert.pem'), 'utf8');
    return { pem: `${key}${certPem}`, certPem };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface WorkloadIssuer {
  issuer: string;
  publicKeyPem: string;
  /** A projected service account token for `subject`, audience `api://AzureADTokenExchange`. */
  token(subject: string, o?: { audience?: string; lifetimeSeconds?: number }): string;
}

export function generateWorkloadIssuer(issuer = 'https://oidc.cluster.example/abc'): WorkloadIssuer {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    issuer,
    publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    token: (subject, o = {}) => {
      const now = Math.floor(Date.now() / 1000);
      const header = Buffer.from(JSON.stringify({ alg: 'RS256', kid: 'k1', typ: 'JWT' })).toString('base64url');
      const claims = Buffer.from(
        JSON.stringify({
          iss: issuer,
          sub: subject,
          aud: [o.audience ?? 'api://AzureADTokenExchange'],
          iat: now,
          nbf: now,
          exp: now + (o.lifetimeSeconds ?? 3600),
        }),
      ).toString('base64url');
      return `${header}.${claims}.${sign('RSA-SHA256', Buffer.from(`${header}.${claims}`), privateKey).toString('base64url')}`;
    },
  };
}
