/**
 * Google's own clients, configured: a JWT (service account + domain-wide delegation) from
 * google-auth-library and the Directory API v1 client from @googleapis/admin. `rootUrl`
 * goes to the Directory client; the JWT client's token endpoint is fixed in
 * google-auth-library 11, so a non-default `tokenUrl` is applied by a request interceptor
 * on the client's own transporter (the assertion's audience stays Google's token URL, as
 * Google requires). Both libraries load on first use.
 */
import type { admin_directory_v1, admin_reports_v1 } from '@googleapis/admin';
import type { JWT } from 'google-auth-library';
import { SourceError } from '../../errors.ts';

export const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';

/** The fields of a service-account JSON key file that are used. */
export interface ServiceAccountKey {
  clientEmail: string;
  clientId: string;
  privateKey: string;
  privateKeyId: string | undefined;
}

/** Parse a JSON key file; messages name the problem, never the key material. */
export function parseServiceAccountKey(text: string, path: string): ServiceAccountKey {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new SourceError(
      `serviceAccountKeyFile ${path} is not JSON: download a JSON key (IAM & Admin → Service accounts → Keys → Add key → JSON)`,
    );
  }
  const k = raw as Record<string, unknown>;
  if (k['type'] !== 'service_account')
    throw new SourceError(
      `serviceAccountKeyFile ${path} is not a service account key (type is ${JSON.stringify(k['type'] ?? null)}, expected "service_account")`,
    );
  for (const f of ['client_email', 'private_key', 'client_id'] as const) {
    if (typeof k[f] !== 'string' || k[f] === '') throw new SourceError(`serviceAccountKeyFile ${path} has no ${f}`);
  }
  return {
    clientEmail: k['client_email'] as string,
    clientId: k['client_id'] as string,
    privateKey: k['private_key'] as string,
    privateKeyId: typeof k['private_key_id'] === 'string' ? k['private_key_id'] : undefined,
  };
}

export interface ClientOptions {
  key: ServiceAccountKey;
  subject: string;
  scopes: string[];
  rootUrl: string;
  tokenUrl: string;
  timeoutMs: number;
}

export async function createJwt(o: ClientOptions): Promise<JWT> {
  const { JWT: JwtClient } = await import('google-auth-library');
  const jwt = new JwtClient({
    email: o.key.clientEmail,
    key: o.key.privateKey,
    ...(o.key.privateKeyId ? { keyId: o.key.privateKeyId } : {}),
    scopes: o.scopes,
    subject: o.subject,
    transporterOptions: { timeout: o.timeoutMs },
  });
  if (o.tokenUrl !== GOOGLE_TOKEN_URL) {
    const target = new URL(o.tokenUrl);
    jwt.transporter.interceptors.request.add({
      resolved: async (req) => {
        if (req.url.toString() === GOOGLE_TOKEN_URL) req.url = new URL(target);
        return req;
      },
    });
  }
  return jwt;
}

export async function createDirectory(jwt: JWT, rootUrl: string): Promise<admin_directory_v1.Admin> {
  const { admin } = await import('@googleapis/admin');
  return admin({ version: 'directory_v1', auth: jwt, rootUrl });
}

export async function createReports(jwt: JWT, rootUrl: string): Promise<admin_reports_v1.Admin> {
  const { admin } = await import('@googleapis/admin');
  return admin({ version: 'reports_v1', auth: jwt, rootUrl });
}
