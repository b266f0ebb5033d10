/**
 * The OAuth 2.0 token endpoint for service accounts (RFC 7523 JWT bearer grant), as
 * oauth2.googleapis.com/token behaves: the assertion must be an RS256 JWT signed with a
 * known account's key, for Google's token audience, short-lived, with scopes; a `sub`
 * (domain-wide delegation) must name an existing user and every scope must be granted to
 * the account's client id in the Admin console. Errors are Google's, word for word where known.
 */
import { createPublicKey, randomBytes, verify } from 'node:crypto';
import { oauthError, type JsonReply } from './errors.ts';
import type { SimServiceAccount } from './types.ts';

export const GOOGLE_TOKEN_AUDIENCE = 'https://oauth2.googleapis.com/token';
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
/** Seconds of clock skew tolerated on iat/exp. */
const SKEW_SECONDS = 300;

export interface IssuedToken {
  clientEmail: string;
  subject: string | undefined;
  scopes: Set<string>;
  expiresAt: number;
}

export interface TokenEnv {
  accounts: ReadonlyMap<string, SimServiceAccount>;
  /** Lower-cased primary emails and aliases of the workspace's users. */
  userExists: (email: string) => boolean;
  issued: Map<string, IssuedToken>;
  now?: () => number;
}

const UNAUTHORIZED_CLIENT =
  'Client is unauthorized to retrieve access tokens using this method, or client not authorized for any of the scopes requested.';
const TIMEFRAME =
  'Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim.';

function decodePart(part: string | undefined): Record<string, unknown> | undefined {
  if (part === undefined) return undefined;
  try {
    const v: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

export function handleToken(form: URLSearchParams, env: TokenEnv): JsonReply {
  const grant = form.get('grant_type');
  if (grant !== JWT_BEARER) return oauthError(400, 'unsupported_grant_type', `Invalid grant_type: ${grant ?? ''}`);
  const assertion = form.get('assertion') ?? '';
  const parts = assertion.split('.');
  const header = decodePart(parts[0]);
  const claims = decodePart(parts[1]);
  if (parts.length !== 3 || !header || !claims)
    return oauthError(400, 'invalid_grant', 'Invalid JWT: the assertion is not a well-formed JWT.');
  if (header['alg'] !== 'RS256') return oauthError(400, 'invalid_grant', 'Invalid JWT Signature.');
  const iss = typeof claims['iss'] === 'string' ? claims['iss'] : '';
  const account = env.accounts.get(iss.toLowerCase());
  if (!account) return oauthError(400, 'invalid_grant', 'Invalid grant: account not found');
  const signed = Buffer.from(`${parts[0]}.${parts[1]}`);
  const ok = verify('RSA-SHA256', signed, createPublicKey(account.publicKeyPem), Buffer.from(parts[2] as string, 'base64url'));
  if (!ok) return oauthError(400, 'invalid_grant', 'Invalid JWT Signature.');
  if (claims['aud'] !== GOOGLE_TOKEN_AUDIENCE)
    return oauthError(
      400,
      'invalid_grant',
      'Invalid JWT: Failed audience check. The expected audience is https://oauth2.googleapis.com/token.',
    );
  const now = Math.floor((env.now?.() ?? Date.now()) / 1000);
  const iat = Number(claims['iat']);
  const exp = Number(claims['exp']);
  if (!Number.isFinite(iat) || !Number.isFinite(exp) || exp - iat > 3600 || iat > now + SKEW_SECONDS || exp < now - SKEW_SECONDS) {
    return oauthError(400, 'invalid_grant', TIMEFRAME);
  }
  const rawScope = claims['scope'];
  const scopes = (Array.isArray(rawScope) ? rawScope.join(' ') : typeof rawScope === 'string' ? rawScope : '')
    .split(/\s+/)
    .filter((s) => s !== '');
  if (scopes.length === 0) return oauthError(400, 'invalid_scope', 'Empty or missing scope not allowed.');
  const sub = typeof claims['sub'] === 'string' && claims['sub'] !== '' ? claims['sub'] : undefined;
  if (sub !== undefined) {
    if (!env.userExists(sub.toLowerCase())) return oauthError(400, 'invalid_grant', 'Invalid email or User ID');
    const granted = new Set(account.delegatedScopes ?? []);
    if (account.delegatedScopes === undefined || scopes.some((s) => !granted.has(s)))
      return oauthError(401, 'unauthorized_client', UNAUTHORIZED_CLIENT);
  }
  const token = `ya29.sim-${randomBytes(24).toString('base64url')}`;
  const expiresIn = 3599;
  env.issued.set(token, {
    clientEmail: account.clientEmail,
    subject: sub?.toLowerCase(),
    scopes: new Set(scopes),
    expiresAt: (now + expiresIn) * 1000,
  });
  return { status: 200, json: { access_token: token, expires_in: expiresIn, token_type: 'Bearer' } };
}
