/**
 * LDAP failures → SourceError, once, with a message an operator can act on. Messages name the
 * URL, the bind DN or the base DN, never the password.
 */
import { ErrorCodes, SourceError, errorCodeOf, type ErrorCode } from '../../errors.ts';

/**
 * The source's credential was refused (bind: invalid credentials, inappropriate
 * authentication): like the platform's 401, only a config or secret change fixes it, so it
 * carries E_AUTH_INVALID (exit 2, never retried) and stays a SourceError for everything else.
 */
export class SourceCredentialError extends SourceError {
  override readonly code: ErrorCode = ErrorCodes.AUTH_INVALID;
}

/** The server's own diagnostic text of an ldapts result error, without its ` Code: 0x…` suffix. */
export function serverSaid(e: unknown): string | undefined {
  if (!(e instanceof Error)) return undefined;
  const text = e.message.replace(/\s*Code: 0x[0-9a-f]+$/i, '').trim();
  return text === '' ? undefined : text.length > 300 ? `${text.slice(0, 300)}…` : text;
}

/** RFC 4511 result codes worth a readable name in messages. */
const RESULT_NAMES: Record<number, string> = {
  1: 'operations error',
  2: 'protocol error',
  3: 'time limit exceeded',
  4: 'size limit exceeded',
  7: 'auth method not supported',
  8: 'stronger authentication required',
  11: 'administrative limit exceeded',
  12: 'unavailable critical extension',
  13: 'confidentiality required',
  32: 'no such object',
  34: 'invalid DN syntax',
  48: 'inappropriate authentication',
  49: 'invalid credentials',
  50: 'insufficient access rights',
  51: 'busy',
  52: 'unavailable',
  53: 'unwilling to perform',
  80: 'other',
};

const HINTS: Record<number, string> = {
  4: 'the server capped the result; the bind account must be allowed to page past the size limit',
  8: 'use ldaps:// or startTls: true',
  13: 'use ldaps:// or startTls: true',
  32: 'check the base DN',
  34: 'check the DN syntax',
  50: 'grant the bind account read access',
};

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
]);

function resultCode(e: unknown): number | undefined {
  if (!(e instanceof Error)) return undefined;
  const code = (e as { code?: unknown }).code;
  // ldapts result-code errors carry a numeric `code`; socket errors carry a string one.
  return typeof code === 'number' ? code : undefined;
}

/** `invalid credentials (49)` */
export function describeResult(code: number): string {
  return `${RESULT_NAMES[code] ?? 'result code'} (${code})`;
}

export type LdapStage = 'connect' | 'starttls' | 'bind' | 'search';

export interface LdapErrorContext {
  url: string;
  bindDn: string;
  /** For searches: what was being read, e.g. `users under ou=people,dc=example,dc=org`. */
  what?: string;
  timeoutSeconds: number;
  connectTimeoutSeconds: number;
  /** provisioning.source.pageSize, named in the hint for an administrative limit. */
  pageSize?: number;
}

export function ldapError(e: unknown, stage: LdapStage, ctx: LdapErrorContext): SourceError {
  if (e instanceof SourceError) return e;
  const message = e instanceof Error ? e.message : String(e);
  const code = resultCode(e);
  const sys = errorCodeOf(e);
  const opts = { cause: e };

  // The server's own explanation is kept: it often names the exact limit or the AD sub-error.
  const said = code !== undefined ? serverSaid(e) : undefined;
  const server = said ? `; the server said: "${said}"` : '';
  if (stage === 'bind' && code !== undefined) {
    if (code === 49 || code === 48) {
      return new SourceCredentialError(
        `LDAP bind failed for ${ctx.bindDn}: ${describeResult(code)}${server}: check provisioning.source.bindDn and bindPassword / bindPasswordFile`,
        opts,
      );
    }
    const hint = HINTS[code] ? `: ${HINTS[code]}` : '';
    return new SourceError(`LDAP bind failed for ${ctx.bindDn}: ${describeResult(code)}${server}${hint}`, opts);
  }
  if (code !== undefined) {
    const target = ctx.what ? ` of ${ctx.what}` : '';
    const hint =
      code === 11 && stage === 'search'
        ? `: the page size${ctx.pageSize !== undefined ? ` (provisioning.source.pageSize: ${ctx.pageSize})` : ''} is above the server's limit (Active Directory MaxPageSize, 1000 by default; OpenLDAP limits size.pr); lower provisioning.source.pageSize`
        : HINTS[code]
          ? `: ${HINTS[code]}`
          : '';
    const op = stage === 'starttls' ? 'StartTLS' : 'search';
    return new SourceError(`LDAP ${op}${target} failed: ${describeResult(code)}${server}${hint}`, opts);
  }
  if (sys !== undefined && NETWORK_CODES.has(sys)) {
    return new SourceError(`cannot connect to ${ctx.url}: ${sys}`, opts);
  }
  if (message === 'Connection timeout') {
    return new SourceError(`cannot connect to ${ctx.url}: timed out after ${ctx.connectTimeoutSeconds}s`, opts);
  }
  if (/Operation timed out/.test(message)) {
    const target = stage === 'search' && ctx.what ? `search of ${ctx.what}` : stage;
    return new SourceError(`LDAP ${target} on ${ctx.url} timed out after ${ctx.timeoutSeconds}s`, opts);
  }
  if (sys !== undefined && /^(ERR_TLS|ERR_SSL|UNABLE_TO|CERT_|DEPTH_ZERO|SELF_SIGNED|HOSTNAME)/.test(sys)) {
    return new SourceError(`TLS with ${ctx.url} failed: ${sys} (check caFile and that the certificate names this host)`, opts);
  }
  if (/Connection closed|Socket error/.test(message)) {
    return new SourceError(`LDAP connection to ${ctx.url} closed during ${stage}${ctx.what ? ` of ${ctx.what}` : ''}`, opts);
  }
  return new SourceError(`LDAP ${stage} with ${ctx.url} failed: ${sys ?? message.split('\n')[0]}`, opts);
}
