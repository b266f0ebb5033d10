/**
 * Okta users → the normalized model. The immutable Okta user id (00u…) is the externalId
 * (a renamed login stays the same person); `profile.login` is the userName. Status maps to
 * `active` through `users.activeStatuses` (default: ACTIVE, PROVISIONED, RECOVERY,
 * PASSWORD_EXPIRED, LOCKED_OUT are active; STAGED, SUSPENDED, DEPROVISIONED are not).
 * The whole profile (base and custom attributes) is kept under `attributes.profile` for
 * mapping and scoping, next to `attributes.status` and the user type.
 */
import type { NormalizedUser } from '../../identity/model.ts';

export type Mapped<T> = { ok: true; value: T } | { ok: false; reason: string };

/** The fields of an Okta user (as the SDK's User model or raw JSON) that are read. */
export interface OktaUserLike {
  id?: string | undefined;
  status?: string | undefined;
  lastUpdated?: Date | string | undefined;
  type?: { id?: string | undefined } | undefined;
  profile?: Record<string, unknown> | undefined;
}

export interface OktaGroupLike {
  id?: string | undefined;
  type?: string | undefined;
  lastUpdated?: Date | string | undefined;
  lastMembershipUpdated?: Date | string | undefined;
  profile?: { name?: string | undefined; description?: string | null | undefined } & Record<string, unknown>;
}

const text = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined);

/** A timestamp as ISO 8601 (the SDK hands Dates, raw JSON strings). */
export function isoOf(v: Date | string | undefined): string | undefined {
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? undefined : v.toISOString();
  return text(v);
}

/** Profile as plain JSON (the SDK's model objects carry prototypes; attributes must be data). */
function plainProfile(p: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(p))
    if (v !== undefined && v !== null && typeof v !== 'function') out[k] = v instanceof Date ? v.toISOString() : v;
  return out;
}

export function mapOktaUser(u: OktaUserLike, activeStatuses: ReadonlySet<string>): Mapped<NormalizedUser> {
  if (typeof u.id !== 'string' || u.id === '') return { ok: false, reason: 'missing id' };
  const p = u.profile ?? {};
  const login = text(p['login']);
  if (login === undefined) return { ok: false, reason: 'missing profile.login' };
  const status = typeof u.status === 'string' ? u.status : 'UNKNOWN';
  const emails: string[] = [];
  for (const k of ['email', 'secondEmail']) {
    const e = text(p[k]);
    if (e !== undefined && !emails.some((x) => x.toLowerCase() === e.toLowerCase())) emails.push(e);
  }
  const attributes: Record<string, unknown> = { oktaId: u.id, status, profile: plainProfile(p) };
  if (typeof u.type?.id === 'string') attributes['userTypeId'] = u.type.id;
  const user: NormalizedUser = { externalId: u.id, userName: login, emails, active: activeStatuses.has(status), attributes };
  const given = text(p['firstName']);
  const family = text(p['lastName']);
  const display = text(p['displayName']) ?? ([given, family].filter(Boolean).join(' ') || undefined);
  if (given !== undefined) user.givenName = given;
  if (family !== undefined) user.familyName = family;
  if (display !== undefined) user.displayName = display;
  return { ok: true, value: user };
}
