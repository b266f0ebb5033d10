/**
 * Shape checks for incoming resources, shared by POST, PUT, PATCH and the in-process store
 * API. Server-owned and read-only attributes are stripped here (RFC 7643 §2.2: a client
 * may send them; the server ignores them).
 */
import { SCHEMA_ENTERPRISE_USER, SCHEMA_GROUP, SCHEMA_USER } from '../platform/scim/types.ts';
import { badValue } from './scim-error.ts';

const SERVER_OWNED = ['id', 'meta', 'groups'];

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function asObject(v: unknown, what: string): Record<string, unknown> {
  if (!isObject(v)) throw badValue(`${what} must be a JSON object`);
  return v;
}

function withoutServerOwned(input: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(input)) if (!SERVER_OWNED.includes(k) && v !== undefined) out[k] = v;
  return out;
}

/** Many IdPs send booleans as "True"/"False"; accept those, refuse anything else. */
function coerceBoolean(v: unknown, what: string): boolean {
  if (typeof v === 'boolean') return v;
  if (typeof v === 'string' && /^(true|false)$/i.test(v)) return v.toLowerCase() === 'true';
  throw badValue(`${what} must be a boolean`);
}

/**
 * `strictSchemas` (HTTP) refuses a body without the core schema; the in-process API fills it in.
 */
export function normalizeUser(input: unknown, strictSchemas: boolean): Record<string, unknown> {
  const out = withoutServerOwned(asObject(input, 'User'));
  const schemas = checkSchemas(out['schemas'], SCHEMA_USER, strictSchemas);
  if (isObject(out[SCHEMA_ENTERPRISE_USER]) && !schemas.includes(SCHEMA_ENTERPRISE_USER)) schemas.push(SCHEMA_ENTERPRISE_USER);
  out['schemas'] = schemas;
  if (typeof out['userName'] !== 'string' || out['userName'].trim() === '')
    throw badValue('userName is required and must be a non-empty string');
  if ('active' in out) out['active'] = coerceBoolean(out['active'], 'active');
  if ('emails' in out) {
    const emails = out['emails'];
    if (!Array.isArray(emails) || !emails.every((e) => isObject(e) && typeof e['value'] === 'string')) {
      throw badValue('emails must be an array of objects with a string value');
    }
  }
  if ('name' in out && !isObject(out['name'])) throw badValue('name must be an object');
  if ('externalId' in out && typeof out['externalId'] !== 'string') throw badValue('externalId must be a string');
  return out;
}

/** The unique-email-types rule: every address has a type, no two share one (compared case-insensitively). */
export function checkUniqueEmailTypes(user: Record<string, unknown>): void {
  const emails = user['emails'];
  if (!Array.isArray(emails)) return;
  const seen = new Set<string>();
  for (const e of emails as Record<string, unknown>[]) {
    const type = e['type'];
    if (typeof type !== 'string' || type.trim() === '')
      throw badValue(`emails: every address needs a type (${String(e['value'])} has none)`);
    const key = type.toLowerCase();
    if (seen.has(key)) throw badValue(`emails: type "${type}" is used by more than one address; types must be unique`);
    seen.add(key);
  }
}

export function normalizeGroup(input: unknown, strictSchemas: boolean): Record<string, unknown> {
  const out = withoutServerOwned(asObject(input, 'Group'));
  out['schemas'] = checkSchemas(out['schemas'], SCHEMA_GROUP, strictSchemas);
  if (typeof out['displayName'] !== 'string' || out['displayName'].trim() === '')
    throw badValue('displayName is required and must be a non-empty string');
  if ('externalId' in out && typeof out['externalId'] !== 'string') throw badValue('externalId must be a string');
  if ('members' in out) {
    const members = out['members'];
    if (!Array.isArray(members) || !members.every((m) => isObject(m) && typeof m['value'] === 'string')) {
      throw badValue('members must be an array of objects with a string value');
    }
  }
  return out;
}

function checkSchemas(v: unknown, core: string, strict: boolean): string[] {
  if (v === undefined && !strict) return [core];
  if (!Array.isArray(v) || !v.every((s) => typeof s === 'string')) throw badValue(`schemas must be an array containing ${core}`);
  if (!v.includes(core)) {
    if (strict) throw badValue(`schemas must contain ${core}`);
    return [core, ...v];
  }
  return [...v];
}
