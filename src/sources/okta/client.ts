/**
 * The Okta SDK's Client, configured: SSWS token or PrivateKey mode, our request executor
 * (pacing, retries, bounds), no response cache (a directory read must see the org as it
 * is now, not a cached page). The SDK loads on first use.
 *
 * The SDK also reads `okta.yaml` and OKTA_CLIENT_* environment variables; every value
 * that matters is passed explicitly, which wins over both.
 */
import type { Client } from '@okta/okta-sdk-nodejs';
import { SourceError } from '../../errors.ts';
import { PacedRequestExecutor, type ExecutorOptions } from './executor.ts';

export type OktaCredential =
  | { mode: 'token'; token: string }
  | { mode: 'oauth'; clientId: string; privateKey: string; keyId?: string | undefined; scopes: string[] };

export interface OktaClient {
  client: Client;
  executor: PacedRequestExecutor;
}

export async function createOktaClient(orgUrl: string, cred: OktaCredential, exec: ExecutorOptions): Promise<OktaClient> {
  const { Client: OktaSdkClient } = await import('@okta/okta-sdk-nodejs');
  const executor = new PacedRequestExecutor(exec);
  const common = { orgUrl: orgUrl.replace(/\/+$/, ''), requestExecutor: executor, cacheMiddleware: null };
  const client =
    cred.mode === 'token'
      ? new OktaSdkClient({ ...common, authorizationMode: 'SSWS', token: cred.token })
      : new OktaSdkClient({
          ...common,
          authorizationMode: 'PrivateKey',
          clientId: cred.clientId,
          scopes: cred.scopes,
          privateKey: cred.privateKey,
          ...(cred.keyId ? { keyId: cred.keyId } : {}),
        });
  return { client, executor };
}

/** A private key file's content: PEM (PKCS#1 or PKCS#8) or a JWK as the Admin Console generates it. */
export function checkPrivateKey(text: string, path: string): string {
  const t = text.trim();
  if (/^-----BEGIN (RSA |EC )?PRIVATE KEY-----/.test(t)) return t;
  if (t.startsWith('{')) {
    let jwk: unknown;
    try {
      jwk = JSON.parse(t);
    } catch {
      throw new SourceError(`privateKeyFile ${path} is neither a PEM private key nor a JWK (JSON does not parse)`);
    }
    const k = jwk as Record<string, unknown>;
    if ((k['kty'] === 'RSA' || k['kty'] === 'EC') && typeof k['d'] === 'string') return t;
    throw new SourceError(`privateKeyFile ${path} is a JWK without its private part (kty RSA or EC with "d"): download the private key`);
  }
  if (/-----BEGIN (PUBLIC KEY|CERTIFICATE)-----/.test(t))
    throw new SourceError(`privateKeyFile ${path} holds a public key or certificate: mount the private key of the service app`);
  throw new SourceError(`privateKeyFile ${path} is neither a PEM private key nor a JWK`);
}
