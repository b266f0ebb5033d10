/**
 * The org authorization server's token endpoint (POST /oauth2/v1/token) for OAuth 2.0
 * service apps: client_credentials with a private-key JWT client assertion
 * (RFC 7523), verified like Okta does — signature against the app's registered public key
 * (RS256/ES256, matched by `kid` when the app has several), `iss` = `sub` = client id,
 * `aud` = this endpoint's URL, unexpired, at most one hour long — and scopes limited to
 * those granted to the app. Error bodies are Okta's `{error, error_description}`.
 */
import { createPublicKey, randomBytes, verify, type KeyObject } from 'node:crypto';

export interface SimServiceApp {
  clientId: string;
  /** Registered public keys (PEM or JWK), by kid. */
  publicKeys: Array<{ kid?: string; pem: string }>;
  /** Okta API scopes granted to the app (`okta.users.read`…). */
  grantedScopes: string[];
  /** Admin role assigned to the app; none: every API call is 403. */
  adminRole?: string | undefined;
}

export interface IssuedToken {
  clientId: string;
  scopes: string[];
  adminRole: string | undefined;
  expiresAt: number;
}

export interface TokenReply {
  status: number;
  json: unknown;
}

const ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

function b64json(part: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    return v !== null && typeof v === 'object' ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

const err = (status: number, error: string, description: string): TokenReply => ({
  status,
  json: { error, error_description: description },
});

export function handleToken(
  form: URLSearchParams,
  endpointUrl: string,
  apps: ReadonlyMap<string, SimServiceApp>,
  issued: Map<string, IssuedToken>,
  nowMs = Date.now(),
): TokenReply {
  if (form.get('grant_type') !== 'client_credentials')
    return err(400, 'unsupported_grant_type', 'The authorization grant type is not supported by the authorization server.');
  if (form.get('client_assertion_type') !== ASSERTION_TYPE)
    return err(401, 'invalid_client', 'Client authentication failed. Either the client or the client credentials are invalid.');
  const assertion = form.get('client_assertion') ?? '';
  const parts = assertion.split('.');
  const header = parts.length === 3 ? b64json(parts[0] as string) : undefined;
  const claims = parts.length === 3 ? b64json(parts[1] as string) : undefined;
  if (!header || !claims) return err(400, 'invalid_client', 'The client_assertion is not a valid JWT.');
  const clientId = typeof claims['iss'] === 'string' ? claims['iss'] : '';
  const app = apps.get(clientId);
  if (!app) return err(401, 'invalid_client', `The client_id '${clientId}' is invalid.`);
  if (claims['sub'] !== clientId) return err(401, 'invalid_client', "The 'sub' claim must equal the client_id.");
  if (claims['aud'] !== endpointUrl)
    return err(401, 'invalid_client', 'The audience claim for client_assertion must be the endpoint invoking the client_assertion.');
  const now = Math.floor(nowMs / 1000);
  const exp = typeof claims['exp'] === 'number' ? claims['exp'] : 0;
  const iat = typeof claims['iat'] === 'number' ? claims['iat'] : now;
  if (exp <= now) return err(401, 'invalid_client', 'The client_assertion token is expired.');
  if (exp - iat > 3600) return err(401, 'invalid_client', 'The client_assertion token has an expiration too far into the future.');
  const alg = header['alg'];
  if (alg !== 'RS256' && alg !== 'ES256')
    return err(401, 'invalid_client', `The client_assertion algorithm ${String(alg)} is not supported.`);
  const kid = typeof header['kid'] === 'string' ? header['kid'] : undefined;
  const candidates = app.publicKeys.filter((k) => kid === undefined || k.kid === undefined || k.kid === kid);
  const signed = Buffer.from(`${parts[0]}.${parts[1]}`);
  const signature = Buffer.from(parts[2] as string, 'base64url');
  const ok = candidates.some((k) => {
    let key: KeyObject;
    try {
      key = createPublicKey(k.pem);
    } catch {
      return false;
    }
    return alg === 'RS256'
      ? verify('sha256', signed, key, signature)
      : verify('sha256', signed, { key, dsaEncoding: 'ieee-p1363' }, signature);
  });
  if (!ok) return err(401, 'invalid_client', 'The client_assertion signature is invalid.');
  const scopes = (form.get('scope') ?? '').split(' ').filter((s) => s !== '');
  if (scopes.length === 0)
    return err(400, 'invalid_scope', 'The authorization server resource does not have any configured default scopes.');
  if (scopes.some((s) => !app.grantedScopes.includes(s)))
    return err(400, 'invalid_scope', 'The requested scope is invalid, unknown, or malformed.');
  const token = randomBytes(24).toString('base64url');
  issued.set(token, { clientId, scopes, adminRole: app.adminRole, expiresAt: nowMs + 3600_000 });
  return { status: 200, json: { token_type: 'Bearer', expires_in: 3600, access_token: token, scope: scopes.join(' ') } };
}
