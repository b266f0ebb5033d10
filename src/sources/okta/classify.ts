/**
 * Okta failures → SyncError, once, with the fix in the message. Two error shapes arrive:
 * the org authorization server's `{error, error_description}` (token endpoint) and the
 * Management API's `{errorCode, errorSummary, errorCauses}`; a missing OAuth scope is a 403
 * whose WWW-Authenticate says `insufficient_scope`. Credential and permission problems
 * are config-class (exit 2, never retried); rate limits and 5xx are transient. Nothing
 * from the request (token, assertion) is ever quoted.
 */
import { ErrorCodes, SourceError, SyncError } from '../../errors.ts';
import { OktaCallError } from './executor.ts';

export interface OktaClassifyContext {
  /** e.g. `GET /api/v1/users page 7`. */
  what: string;
  orgUrl: string;
  mode: 'token' | 'oauth';
  clientId?: string | undefined;
  scopes: readonly string[];
}

export const TOKEN_FIX =
  'Admin Console → Security → API → Tokens → Create token, signed in as an administrator with the Read-Only Administrator role (or higher), and mount it as apiTokenFile';
export const SCOPE_PATH = 'Admin Console → Applications → Applications → the API Services app → Okta API Scopes → Grant';
export const ROLE_PATH =
  'Admin Console → Applications → Applications → the API Services app → Admin roles → Edit assignments → Read-Only Administrator';

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

export function oktaError(e: unknown, ctx: OktaClassifyContext): SyncError {
  if (e instanceof SyncError) return e;
  if (!(e instanceof OktaCallError)) {
    const msg = e instanceof Error ? e.message.split('\n')[0] : String(e);
    return new SourceError(`${ctx.what} failed: ${msg}; nothing was changed`);
  }
  const body = e.body ?? {};
  const status = e.status;
  const code = str(body['errorCode']);
  const summary = str(body['errorSummary']);
  const oauthError = str(body['error']);
  const description = str(body['error_description']);
  const said = code || oauthError ? ` (Okta: ${code ?? oauthError}${summary || description ? `: ${summary ?? description}` : ''})` : '';
  const cause = new Error(`${status ?? e.network ?? 'error'}${code ? ` ${code}` : ''}${oauthError ? ` ${oauthError}` : ''} on ${e.path}`);
  const opts = {
    cause,
    ...(status !== undefined ? { status } : {}),
    ...((code ?? oauthError) ? { detail: (code ?? oauthError) as string } : {}),
  };
  const fatal = (c: (typeof ErrorCodes)[keyof typeof ErrorCodes], text: string): SyncError => new SyncError(c, 'fatal', text, opts);
  const app = ctx.clientId ?? '(unknown client)';

  if (oauthError !== undefined && e.path.endsWith('/oauth2/v1/token')) {
    if (oauthError === 'invalid_client' && /signature/i.test(description ?? ''))
      return fatal(
        ErrorCodes.AUTH_INVALID,
        `Okta rejected the signature of the client assertion for service app ${app}: privateKeyFile is not the private half of a public key registered on that app (rotated or replaced?). Fix: Admin Console → Applications → Applications → the app → General → Public Keys: add the key's public half (or mount the current private key; set keyId when the app has several)${said}`,
      );
    if (oauthError === 'invalid_client' && /client_id/i.test(description ?? ''))
      return fatal(
        ErrorCodes.AUTH_INVALID,
        `Okta does not know the service app ${app} in ${ctx.orgUrl}: check clientId (Applications → Applications → the API Services app → Client ID) and orgUrl${said}`,
      );
    if (oauthError === 'invalid_client' && /expir|future|iat|exp/i.test(description ?? ''))
      return fatal(
        ErrorCodes.AUTH_INVALID,
        `Okta refused the client assertion's timestamps: this machine's clock is off; synchronise it (NTP)${said}`,
      );
    if (oauthError === 'invalid_scope')
      return fatal(
        ErrorCodes.AUTH_FORBIDDEN,
        `Okta refused a token for service app ${app}: the app is not granted all of ${ctx.scopes.join(', ')}. Fix: ${SCOPE_PATH} ${ctx.scopes.join(' and ')}${said}`,
      );
    return fatal(ErrorCodes.AUTH_INVALID, `Okta refused a token for service app ${app}${said}`);
  }
  if (status === 401) {
    if (ctx.mode === 'token')
      return fatal(
        ErrorCodes.AUTH_INVALID,
        `${ctx.what}: Okta refused the API token in apiTokenFile (revoked, expired after 30 days unused, deactivated creator, or a token of another org than ${ctx.orgUrl}). Fix: ${TOKEN_FIX}${said}`,
      );
    return fatal(ErrorCodes.AUTH_INVALID, `${ctx.what}: Okta refused the service app's access token${said}`);
  }
  if (status === 403) {
    const www = e.headers['www-authenticate'] ?? '';
    if (/insufficient_scope/.test(www)) {
      const scope = /scope="([^"]+)"/.exec(www)?.[1];
      return fatal(
        ErrorCodes.AUTH_FORBIDDEN,
        `${ctx.what}: the access token of service app ${app} lacks scope ${scope ?? ctx.scopes.join(', ')}. Fix: ${SCOPE_PATH} ${scope ?? ctx.scopes.join(' and ')}${said}`,
      );
    }
    if (ctx.mode === 'token')
      return fatal(
        ErrorCodes.AUTH_FORBIDDEN,
        `${ctx.what}: the API token may not read users and groups: a token acts with the admin roles of the user who created it. Fix: create it as an administrator with the Read-Only Administrator role (or higher) — ${TOKEN_FIX}${said}`,
      );
    return fatal(
      ErrorCodes.AUTH_FORBIDDEN,
      `${ctx.what}: service app ${app} has no admin role that may read users and groups (scopes alone are not enough). Fix: ${ROLE_PATH}${said}`,
    );
  }
  if (status === 400)
    return fatal(ErrorCodes.CONFIG_INVALID, `${ctx.what}: Okta refused the request: check users.search and groups.search${said}`);
  if (status === 404) return new SourceError(`${ctx.what}: not found${said}`, opts);
  if (e.tls !== undefined)
    return fatal(
      ErrorCodes.CONFIG_INVALID,
      `${ctx.what}: TLS verification of ${ctx.orgUrl} failed (${e.tls}); trust its CA with the source's caFile (a TLS-inspecting proxy's CA), or check orgUrl`,
    );
  const tries = e.attempts > 1 ? ` after ${e.attempts} attempts` : '';
  if (status === 429) return new SourceError(`${ctx.what}: still rate limited${tries} (HTTP 429); nothing was changed${said}`, opts);
  if (status !== undefined)
    return new SourceError(`${ctx.what} failed${tries} (HTTP ${status}${code ? ` ${code}` : ''}); nothing was changed${said}`, opts);
  return new SourceError(`${ctx.what} failed${tries}: ${e.network ?? 'network error'}; nothing was changed`, opts);
}
