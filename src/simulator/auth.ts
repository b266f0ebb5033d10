/**
 * Credential checks as the spec describes them: SCIM takes `Bearer` or `Api-Key`, the
 * platform API only `Bearer`; 401 = missing/malformed/unknown, 403 = valid but not allowed
 * here (a deployment-scoped key on SCIM, a SCIM-only token on the platform API, a missing
 * permission). Messages never echo the presented credential.
 */
import type { SimulatorToken } from './types.ts';

export type AuthOutcome = { ok: true; token: SimulatorToken } | { ok: false; status: 401 | 403; message: string };

const HEADER = /^(Bearer|Api-Key)\s+(\S+)\s*$/i;

function identify(header: string | undefined, tokens: ReadonlyMap<string, SimulatorToken>, schemes: string[]): AuthOutcome {
  if (!header) return { ok: false, status: 401, message: 'missing Authorization header' };
  const m = HEADER.exec(header);
  if (!m) return { ok: false, status: 401, message: 'malformed Authorization header' };
  const scheme = (m[1] as string).toLowerCase();
  if (!schemes.includes(scheme)) return { ok: false, status: 401, message: `the ${m[1]} scheme is not accepted here` };
  const token = tokens.get(m[2] as string);
  if (!token) return { ok: false, status: 401, message: 'invalid or expired credential' };
  return { ok: true, token };
}

export function authenticateScim(header: string | undefined, tokens: ReadonlyMap<string, SimulatorToken>): AuthOutcome {
  const who = identify(header, tokens, ['bearer', 'api-key']);
  if (who.ok && who.token.deployments !== undefined) {
    return { ok: false, status: 403, message: 'API key is scoped to specific deployments and is not authorized for this target (SCIM)' };
  }
  return who;
}

export function authenticatePlatform(
  header: string | undefined,
  tokens: ReadonlyMap<string, SimulatorToken>,
  permission?: string,
): AuthOutcome {
  const who = identify(header, tokens, ['bearer']);
  if (!who.ok) return who;
  if (who.token.kind === 'scim') return { ok: false, status: 403, message: 'a SCIM token is not authorized for this endpoint' };
  if (permission && who.token.permissions !== undefined && !who.token.permissions.includes(permission)) {
    return { ok: false, status: 403, message: `the credential lacks the ${permission} permission` };
  }
  return who;
}
