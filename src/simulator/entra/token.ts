/**
 * The Microsoft identity platform's v2.0 endpoints for one tenant, as MSAL uses them: the
 * OpenID metadata (`/{tenant}/v2.0/.well-known/openid-configuration`) and the token endpoint
 * (`/{tenant}/oauth2/v2.0/token`) with the client credentials grant — a client secret, or a
 * signed JWT client assertion (an uploaded certificate, or a federated workload identity
 * token). Errors carry Entra's AADSTS codes and wording. An app without admin consent still
 * gets a token, with no `roles`: Graph then answers 403, as the real service does.
 */
import { X509Certificate, createHash, createPublicKey, generateKeyPairSync, randomBytes, sign, verify, type KeyObject } from 'node:crypto';
import type { JsonReply, SimApp } from './types.ts';

const ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
const FEDERATED_AUDIENCE = 'api://AzureADTokenExchange';
const SKEW_SECONDS = 300;

export interface IssuedToken {
  clientId: string;
  roles: string[];
  expiresAt: number;
}

export interface TokenEnv {
  tenantId: string;
  domain: string;
  apps: ReadonlyMap<string, SimApp>;
  issued: Map<string, IssuedToken>;
  baseUrl: string;
}

export function aadError(status: number, error: string, code: number, description: string, _tenantId: string): JsonReply {
  const traceId = randomBytes(16).toString('hex');
  return {
    status,
    json: {
      error,
      error_description: `AADSTS${code}: ${description} Trace ID: ${traceId} Correlation ID: ${randomBytes(16).toString('hex')} Timestamp: ${new Date().toISOString().replace('T', ' ').slice(0, 19)}Z`,
      error_codes: [code],
      timestamp: new Date().toISOString(),
      trace_id: traceId,
      error_uri: `https://login.microsoftonline.com/error?code=${code}`,
    },
  };
}

/** `{tenant}` of a path: the tenant id or one of its domains. */
export function knownTenant(segment: string, env: Pick<TokenEnv, 'tenantId' | 'domain'>): boolean {
  const s = segment.toLowerCase();
  return s === env.tenantId.toLowerCase() || s === env.domain.toLowerCase();
}

export function tenantNotFound(segment: string): JsonReply {
  return aadError(
    400,
    'invalid_request',
    90002,
    `Tenant '${segment}' not found. Check to make sure you have the correct tenant ID and are signing into the correct cloud. Check with your subscription administrator, this may happen if there are no active subscriptions for the tenant.`,
    '',
  );
}

export function openidConfiguration(env: TokenEnv): JsonReply {
  const t = `${env.baseUrl}/${env.tenantId}`;
  return {
    status: 200,
    json: {
      token_endpoint: `${t}/oauth2/v2.0/token`,
      token_endpoint_auth_methods_supported: ['client_secret_post', 'private_key_jwt', 'client_secret_basic'],
      jwks_uri: `${env.baseUrl}/${env.tenantId}/discovery/v2.0/keys`,
      response_modes_supported: ['query', 'fragment', 'form_post'],
      subject_types_supported: ['pairwise'],
      id_token_signing_alg_values_supported: ['RS256'],
      response_types_supported: ['code', 'id_token', 'code id_token', 'id_token token'],
      scopes_supported: ['openid', 'profile', 'email', 'offline_access'],
      issuer: `${t}/v2.0`,
      request_uri_parameter_supported: false,
      userinfo_endpoint: 'https://graph.microsoft.com/oidc/userinfo',
      authorization_endpoint: `${t}/oauth2/v2.0/authorize`,
      device_authorization_endpoint: `${t}/oauth2/v2.0/devicecode`,
      http_logout_supported: true,
      frontchannel_logout_supported: true,
      end_session_endpoint: `${t}/oauth2/v2.0/logout`,
      claims_supported: ['sub', 'iss', 'aud', 'exp', 'iat', 'nbf', 'tid'],
      kerberos_endpoint: `${t}/kerberos`,
      tenant_region_scope: 'EU',
      cloud_instance_name: 'microsoftonline.com',
      cloud_graph_host_name: 'graph.windows.net',
      msgraph_host: 'graph.microsoft.com',
      rbac_url: 'https://pas.windows.net',
    },
  };
}

function decodePart(part: string | undefined): Record<string, unknown> | undefined {
  if (part === undefined) return undefined;
  try {
    const v: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

const thumbprints = (pem: string): { sha1: string; sha256: string; key: KeyObject } => {
  const c = new X509Certificate(pem);
  return {
    sha1: createHash('sha1').update(c.raw).digest('base64url'),
    sha256: createHash('sha256').update(c.raw).digest('base64url'),
    key: c.publicKey,
  };
};

/** The signing key the simulator's access tokens are signed with (decodable JWTs, as Entra's are). */
const SIGNING_KEY = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;

function accessToken(env: TokenEnv, app: SimApp, roles: string[], now: number, expiresIn: number): string {
  const header = { typ: 'JWT', alg: 'RS256', kid: 'sim-key' };
  const claims = {
    aud: 'https://graph.microsoft.com',
    iss: `https://sts.windows.net/${env.tenantId}/`,
    iat: now,
    nbf: now,
    exp: now + expiresIn,
    app_displayname: app.displayName ?? 'scim-audit-sync',
    appid: app.clientId,
    idtyp: 'app',
    ...(roles.length > 0 ? { roles } : {}),
    sub: app.clientId,
    tid: env.tenantId,
    ver: '1.0',
  };
  const body = `${Buffer.from(JSON.stringify(header)).toString('base64url')}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
  return `${body}.${sign('RSA-SHA256', Buffer.from(body), SIGNING_KEY).toString('base64url')}`;
}

/** Checks a client assertion; undefined when valid, else the AADSTS error. */
function checkAssertion(assertion: string, app: SimApp, env: TokenEnv, now: number): JsonReply | undefined {
  const parts = assertion.split('.');
  const header = decodePart(parts[0]);
  const claims = decodePart(parts[1]);
  const bad = (code: number, text: string): JsonReply => aadError(401, 'invalid_client', code, text, env.tenantId);
  if (parts.length !== 3 || !header || !claims) return bad(50027, 'JWT token is invalid or malformed.');
  const signed = Buffer.from(`${parts[0]}.${parts[1]}`);
  const signature = Buffer.from(parts[2] as string, 'base64url');
  const alg = header['alg'] === 'PS256' ? 'RSA-SHA256' : header['alg'] === 'RS256' ? 'RSA-SHA256' : undefined;
  if (!alg) return bad(5002738, `Invalid JWT token. '${String(header['alg'])}' is not a supported signature algorithm.`);
  const verifyWith = (key: KeyObject): boolean =>
    header['alg'] === 'PS256'
      ? verify(alg, signed, { key, padding: 6 /* RSA_PKCS1_PSS_PADDING */, saltLength: 32 }, signature)
      : verify(alg, signed, key, signature);
  const exp = Number(claims['exp']);
  const nbf = Number(claims['nbf'] ?? claims['iat']);
  if (!Number.isFinite(exp) || exp < now - SKEW_SECONDS || (Number.isFinite(nbf) && nbf > now + SKEW_SECONDS))
    return bad(700024, 'Client assertion is not within its valid time range.');
  const iss = typeof claims['iss'] === 'string' ? claims['iss'] : '';
  if (iss === app.clientId) {
    // A certificate credential: x5t / x5t#S256 name the certificate, aud is the token endpoint.
    const x5t = typeof header['x5t'] === 'string' ? header['x5t'] : undefined;
    const x5t256 = typeof header['x5t#S256'] === 'string' ? header['x5t#S256'] : undefined;
    const cert = (app.certificates ?? []).map(thumbprints).find((c) => c.sha1 === x5t || c.sha256 === x5t256);
    if (!cert)
      return bad(
        700027,
        `The certificate with identifier used to sign the client assertion is not registered on application. [Reason - The key was not found., Thumbprint of key used by client: '${Buffer.from(
          x5t ?? x5t256 ?? '',
          'base64url',
        )
          .toString('hex')
          .toUpperCase()}', Please visit the Azure Portal, Graph Explorer or directly use MS Graph to see configured keys for app Id '${app.clientId}'.`,
      );
    if (!verifyWith(cert.key)) return bad(700027, 'Client assertion failed signature validation.');
    // The audience is the token endpoint the assertion is presented to.
    if (claims['aud'] !== `${env.baseUrl}/${env.tenantId}/oauth2/v2.0/token`)
      return bad(50027, `Invalid JWT token. The audience '${String(claims['aud'])}' is not this token endpoint.`);
    return undefined;
  }
  // A federated credential (workload identity): issuer + subject + audience must match one record.
  const sub = typeof claims['sub'] === 'string' ? claims['sub'] : '';
  const aud = Array.isArray(claims['aud']) ? (claims['aud'] as unknown[]) : [claims['aud']];
  const record = (app.federated ?? []).find((f) => f.issuer === iss && f.subject === sub && aud.includes(f.audience ?? FEDERATED_AUDIENCE));
  if (!record)
    return aadError(
      400,
      'invalid_request',
      70021,
      `No matching federated identity record found for presented assertion. Assertion Issuer: '${iss}'. Assertion Subject: '${sub}'. Assertion Audience: '${aud.map(String).join(',')}'. https://learn.microsoft.com/entra/workload-id/workload-identity-federation`,
      env.tenantId,
    );
  if (!verifyWith(createPublicKey(record.publicKeyPem)))
    return aadError(
      400,
      'invalid_request',
      700211,
      `No matching federated identity record found for presented assertion issuer '${iss}'.`,
      env.tenantId,
    );
  return undefined;
}

export function handleToken(form: URLSearchParams, env: TokenEnv, now = Math.floor(Date.now() / 1000)): JsonReply {
  const grant = form.get('grant_type');
  if (grant !== 'client_credentials')
    return aadError(400, 'unsupported_grant_type', 70003, `The app requested an unsupported grant type '${grant ?? ''}'.`, env.tenantId);
  const clientId = form.get('client_id') ?? '';
  const app = env.apps.get(clientId.toLowerCase());
  if (!app)
    return aadError(
      400,
      'unauthorized_client',
      700016,
      `Application with identifier '${clientId}' was not found in the directory '${env.domain}'. This can happen if the application has not been installed by the administrator of the tenant or consented to by any user in the tenant. You may have sent your authentication request to the wrong tenant.`,
      env.tenantId,
    );
  const scope = form.get('scope') ?? '';
  if (!/\/\.default$/.test(scope))
    return aadError(
      400,
      'invalid_scope',
      1002012,
      `The provided value for scope ${scope} is not valid. Client credential flows must have a scope value with /.default suffixed to the resource identifier (application ID URI).`,
      env.tenantId,
    );
  const secret = form.get('client_secret');
  const assertion = form.get('client_assertion');
  if (secret !== null) {
    const match = (app.secrets ?? []).find((s) => s.value === secret);
    if (!match)
      return aadError(
        401,
        'invalid_client',
        7000215,
        `Invalid client secret provided. Ensure the secret being sent in the request is the client secret value, not the client secret ID, for a secret added to app '${app.clientId}'.`,
        env.tenantId,
      );
    if (match.expiresAt !== undefined && match.expiresAt < now * 1000)
      return aadError(
        401,
        'invalid_client',
        7000222,
        `The provided client secret keys for app '${app.clientId}' are expired. Visit the Azure portal to create new keys for your app: https://aka.ms/NewClientSecret, or consider using certificate credentials for added security: https://aka.ms/certCreds.`,
        env.tenantId,
      );
  } else if (assertion !== null) {
    if (form.get('client_assertion_type') !== ASSERTION_TYPE)
      return aadError(
        400,
        'invalid_request',
        90014,
        "The required field 'client_assertion_type' is missing from the credential.",
        env.tenantId,
      );
    const refused = checkAssertion(assertion, app, env, now);
    if (refused) return refused;
  } else {
    return aadError(
      401,
      'invalid_client',
      7000218,
      "The request body must contain the following parameter: 'client_assertion' or 'client_secret'.",
      env.tenantId,
    );
  }
  const roles = app.adminConsent ? [...(app.permissions ?? [])] : [];
  const expiresIn = 3599;
  const token = accessToken(env, app, roles, now, expiresIn);
  env.issued.set(token, { clientId: app.clientId, roles, expiresAt: (now + expiresIn) * 1000 });
  return { status: 200, json: { token_type: 'Bearer', expires_in: expiresIn, ext_expires_in: expiresIn, access_token: token } };
}
