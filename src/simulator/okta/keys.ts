/**
 * Service-app keys for the simulator and tests: a fresh RSA key pair, the private key as
 * the Okta Admin Console hands it out (PEM, PKCS#8) and the registered public half the
 * token endpoint verifies client assertions with.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import type { SimServiceApp } from './token.ts';

export interface GeneratedServiceApp {
  privateKeyPem: string;
  app: SimServiceApp;
}

export function generateServiceApp(
  opts: { clientId?: string; grantedScopes?: string[]; adminRole?: string | undefined; kid?: string } = {},
): GeneratedServiceApp {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const kid = opts.kid ?? randomBytes(16).toString('base64url');
  return {
    privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    app: {
      clientId: opts.clientId ?? `0oa${randomBytes(9).toString('hex').slice(0, 17)}`,
      publicKeys: [{ kid, pem: publicKey.export({ type: 'spki', format: 'pem' }).toString() }],
      grantedScopes: opts.grantedScopes ?? ['okta.users.read', 'okta.groups.read'],
      adminRole: 'adminRole' in opts ? opts.adminRole : 'READ_ONLY_ADMIN',
    },
  };
}
