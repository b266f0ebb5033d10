/**
 * Entra failures → SyncError, once, with the fix in the message. Two kinds arrive: token
 * failures from `@azure/identity` (the identity platform's AADSTS codes: a wrong tenant,
 * an unknown app, a wrong or expired secret, an unregistered certificate, no matching
 * federated credential) and Graph errors (`{error: {code, message}}`). A 403 from Graph is
 * explained from the token's own `roles`: none at all means admin consent was not granted;
 * otherwise the missing application permission is named. Credential and permission
 * problems are config-class (exit 2, never retried); throttling and 5xx are transient.
 */
import { ErrorCodes, SourceError, SyncError, errorCodeOf } from '../../errors.ts';

const ENTRA_APP = 'Entra admin center → Identity → Applications → App registrations';

export interface EntraContext {
  tenantId: string;
  clientId: string;
  credential: 'clientSecret' | 'certificate' | 'workloadIdentity';
  /** The permissions this config needs. */
  permissions: readonly string[];
}

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj | undefined => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : undefined);

/** AADSTS code and the first sentence of the description, from whatever shape the library threw. */
function aadsts(e: unknown): { code: number | undefined; text: string } {
  const err = obj(e);
  const response = obj(err?.['errorResponse']);
  const parts = [
    typeof response?.['errorDescription'] === 'string' ? response['errorDescription'] : '',
    typeof err?.['message'] === 'string' ? err['message'] : '',
    String(obj(err?.['cause'])?.['message'] ?? ''),
  ].join('\n');
  const m = /AADSTS(\d+):\s*([^\r\n]*?)(?:\s+Trace ID:|\r?\n|$)/.exec(parts);
  return { code: m ? Number(m[1]) : undefined, text: m ? (m[2] as string).trim() : '' };
}

/** A token could not be obtained. */
export function tokenError(e: unknown, ctx: EntraContext): SyncError {
  if (e instanceof SyncError) return e;
  const { code, text } = aadsts(e);
  const said = code !== undefined ? ` (Entra: AADSTS${code}: ${text})` : '';
  const cause = new Error(code !== undefined ? `AADSTS${code}` : (errorCodeOf(e) ?? (e instanceof Error ? e.name : 'error')));
  const fatal = (
    c: typeof ErrorCodes.AUTH_INVALID | typeof ErrorCodes.AUTH_FORBIDDEN | typeof ErrorCodes.CONFIG_INVALID,
    msg: string,
  ): SyncError => new SyncError(c, 'fatal', msg, { cause, ...(code !== undefined ? { detail: `AADSTS${code}` } : {}) });
  switch (code) {
    case 90002:
    case 900023:
    case 90072:
      return fatal(
        ErrorCodes.CONFIG_INVALID,
        `tenantId ${ctx.tenantId} is not a Microsoft Entra tenant: set tenantId to the Directory (tenant) ID shown on the app registration's Overview page${said}`,
      );
    case 700016:
      return fatal(
        ErrorCodes.AUTH_INVALID,
        `the app ${ctx.clientId} does not exist in tenant ${ctx.tenantId}: check clientId (Application (client) ID on the app's Overview page) and tenantId${said}`,
      );
    case 7000215:
      return fatal(
        ErrorCodes.AUTH_INVALID,
        `Entra rejected the client secret of app ${ctx.clientId}: clientSecretFile must hold the secret's Value (not its Secret ID) of a current secret. Fix: ${ENTRA_APP} → the app → Certificates & secrets → New client secret, and mount its value`,
      );
    case 7000222:
      return fatal(
        ErrorCodes.AUTH_INVALID,
        `the client secret of app ${ctx.clientId} has expired. Fix: ${ENTRA_APP} → the app → Certificates & secrets → New client secret, mount its value in clientSecretFile${said}`,
      );
    case 700027:
      return fatal(
        ErrorCodes.AUTH_INVALID,
        `Entra does not accept the certificate in certificateFile for app ${ctx.clientId}: it is not registered on the app (or the key does not match it). Fix: ${ENTRA_APP} → the app → Certificates & secrets → Certificates → Upload the certificate${said}`,
      );
    case 700024:
      return fatal(
        ErrorCodes.AUTH_INVALID,
        `Entra refused the client assertion's validity period: this machine's clock is off, or the token file is stale; synchronise the clock (NTP)${said}`,
      );
    case 70021:
    case 700211:
    case 700212:
    case 700213:
      return fatal(
        ErrorCodes.AUTH_INVALID,
        `no federated credential of app ${ctx.clientId} matches this workload's token (issuer, subject and audience api://AzureADTokenExchange must match). Fix: ${ENTRA_APP} → the app → Certificates & secrets → Federated credentials → Add: Kubernetes, the cluster's OIDC issuer URL, namespace and service account${said}`,
      );
    case 7000218:
    case 50027:
      return fatal(ErrorCodes.AUTH_INVALID, `Entra refused the credential of app ${ctx.clientId}${said}`);
  }
  if (code !== undefined)
    return fatal(ErrorCodes.AUTH_INVALID, `Entra refused a token for app ${ctx.clientId} in tenant ${ctx.tenantId}${said}`);
  const err = obj(e);
  const name = typeof err?.['name'] === 'string' ? err['name'] : '';
  const message = (e instanceof Error ? e.message.split('\n')[0] : String(e)) ?? '';
  if (/endpoints_resolution_error/.test(message))
    return fatal(
      ErrorCodes.CONFIG_INVALID,
      `the identity platform at authorityHost has no OpenID metadata for tenantId ${ctx.tenantId}: check tenantId (the Directory (tenant) ID on the app registration's Overview page) and authorityHost`,
    );
  if (
    ctx.credential === 'workloadIdentity' &&
    (name === 'CredentialUnavailableError' || /no such file|ENOENT|tokenFilePath|federated token/i.test(message))
  )
    return fatal(
      ErrorCodes.CONFIG_INVALID,
      `credential.tokenFile cannot be read: is the pod labelled azure.workload.identity/use: "true" and its service account annotated with azure.workload.identity/client-id? (${message.replace(/\s+/g, ' ').slice(0, 200)})`,
    );
  return new SourceError(
    `token request for app ${ctx.clientId} failed: ${errorCodeOf(e) ?? errorCodeOf(err?.['cause']) ?? message}; nothing was changed`,
    { cause },
  );
}

export interface GraphErrorInfo {
  status: number;
  code: string | undefined;
  message: string;
  retryAfterMs: number | undefined;
}

export function parseGraphError(status: number, text: string, retryAfterMs: number | undefined): GraphErrorInfo {
  let code: string | undefined;
  let message = '';
  try {
    const e = obj(obj(JSON.parse(text))?.['error']);
    code = typeof e?.['code'] === 'string' ? e['code'] : undefined;
    message = typeof e?.['message'] === 'string' ? e['message'] : '';
  } catch {
    // not JSON: the status says enough
  }
  return { status, code, message, retryAfterMs };
}

export const isRetryableStatus = (status: number): boolean => status === 429 || status === 408 || (status >= 500 && status !== 501);

/** The application permissions in an access token (`roles`), or undefined when it cannot be read. */
export function tokenRoles(accessToken: string): string[] | undefined {
  try {
    const claims = obj(JSON.parse(Buffer.from(accessToken.split('.')[1] ?? '', 'base64url').toString('utf8')));
    if (!claims) return undefined;
    const roles = claims['roles'];
    return Array.isArray(roles) ? roles.filter((r): r is string => typeof r === 'string') : [];
  } catch {
    return undefined;
  }
}

/** Permissions that include another (any one of them will do for the key). */
const SATISFIED_BY: Record<string, string[]> = {
  'User.Read.All': ['User.Read.All', 'User.ReadWrite.All', 'Directory.Read.All', 'Directory.ReadWrite.All'],
  'GroupMember.Read.All': [
    'GroupMember.Read.All',
    'Group.Read.All',
    'Group.ReadWrite.All',
    'Directory.Read.All',
    'Directory.ReadWrite.All',
  ],
  'CustomSecAttributeAssignment.Read.All': ['CustomSecAttributeAssignment.Read.All', 'CustomSecAttributeAssignment.ReadWrite.All'],
};

/**
 * The permission a refused Graph call lacks: of those its kind of call needs (a group listing
 * GroupMember.Read.All; a user listing User.Read.All and, when configured, the custom security
 * attribute permission), the first the token's roles do not cover.
 */
export function neededPermission(what: string, ctx: EntraContext, roles: readonly string[] | undefined): string {
  const groupCall = /^(groups|members|transitiveMembers|group )/.test(what);
  const candidates = groupCall
    ? ['GroupMember.Read.All']
    : ['User.Read.All', ...ctx.permissions.filter((p) => p === 'CustomSecAttributeAssignment.Read.All')];
  const has = new Set(roles ?? []);
  return candidates.find((p) => !(SATISFIED_BY[p] ?? [p]).some((r) => has.has(r))) ?? (candidates[0] as string);
}

/** A final Graph failure (not retried, or retries exhausted). */
export function graphError(i: GraphErrorInfo, what: string, ctx: EntraContext, roles: string[] | undefined, attempts: number): SyncError {
  const said = i.code !== undefined ? ` (Graph: ${i.status} ${i.code}: ${i.message.split('\n')[0]})` : '';
  const opts = { status: i.status, ...(i.code !== undefined ? { detail: i.code } : {}) };
  if (i.status === 403 && (i.code === 'Authorization_RequestDenied' || i.code === 'Forbidden' || i.code === 'accessDenied')) {
    const need = neededPermission(what, ctx, roles);
    if (roles !== undefined && roles.length === 0)
      return new SyncError(
        ErrorCodes.AUTH_FORBIDDEN,
        'fatal',
        `${what}: app ${ctx.clientId} has no Microsoft Graph application permissions in its token: admin consent was not granted. Fix: ${ENTRA_APP} → the app → API permissions → add Microsoft Graph application permissions ${ctx.permissions.join(', ')} → Grant admin consent for the tenant${said}`,
        opts,
      );
    const has = roles !== undefined ? ` (the token holds ${roles.join(', ')})` : '';
    return new SyncError(
      ErrorCodes.AUTH_FORBIDDEN,
      'fatal',
      `${what}: app ${ctx.clientId} lacks the Microsoft Graph application permission ${need}${has}. Fix: ${ENTRA_APP} → the app → API permissions → Add a permission → Microsoft Graph → Application permissions → ${need}, then Grant admin consent${said}`,
      opts,
    );
  }
  if (i.status === 401)
    return new SyncError(
      ErrorCodes.AUTH_INVALID,
      'fatal',
      `${what}: Graph refused the access token (wrong tenant or audience, or expired)${said}`,
      opts,
    );
  if (i.status === 400)
    return new SyncError(
      ErrorCodes.CONFIG_INVALID,
      'fatal',
      `${what}: Graph refused the query: check users.filter / groups.filter / users.select${said}`,
      opts,
    );
  if (i.status === 404) return new SourceError(`${what}: not found${said}`, opts);
  const tries = attempts > 1 ? ` after ${attempts} attempts` : '';
  return new SourceError(`${what} failed${tries} (HTTP ${i.status}${i.code ? ` ${i.code}` : ''}); nothing was changed${said}`, opts);
}
