/**
 * Service-account keys for the simulator and tests: a fresh RSA key pair, the JSON key file
 * Google's console would hand out (same field names), and the public half the simulator's
 * token endpoint verifies assertions with.
 */
import { generateKeyPairSync, randomInt } from 'node:crypto';
import type { SimServiceAccount } from './types.ts';

export interface GeneratedServiceAccount {
  /** The content of the downloaded JSON key file. */
  keyFileJson: string;
  account: SimServiceAccount;
}

export function generateServiceAccount(
  opts: { clientEmail?: string; projectId?: string; delegatedScopes?: string[] } = {},
): GeneratedServiceAccount {
  const projectId = opts.projectId ?? 'sim-project';
  const clientEmail = opts.clientEmail ?? `directory-sync@${projectId}.iam.gserviceaccount.com`;
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const clientId = `1${String(randomInt(1e9)).padStart(9, '0')}${String(randomInt(1e9)).padStart(9, '0')}`;
  const key = {
    type: 'service_account',
    project_id: projectId,
    private_key_id: randomInt(2 ** 47)
      .toString(16)
      .padStart(12, '0'),
    private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    client_email: clientEmail,
    client_id: clientId,
    auth_uri: 'https://accounts.google.com/o/oauth2/auth',
    token_uri: 'https://oauth2.googleapis.com/token',
    universe_domain: 'googleapis.com',
  };
  return {
    keyFileJson: `${JSON.stringify(key, null, 2)}\n`,
    account: {
      clientEmail,
      clientId,
      publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
      ...(opts.delegatedScopes ? { delegatedScopes: opts.delegatedScopes } : {}),
    },
  };
}
