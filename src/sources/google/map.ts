/**
 * Directory API users → the normalized model. The immutable Google user id is the
 * externalId (a renamed primary e-mail stays the same person); suspended and archived users
 * are inactive. Aliases, org unit, organization fields and custom schema fields are kept
 * under `attributes` for mapping and scoping.
 */
import type { admin_directory_v1 } from '@googleapis/admin';
import type { NormalizedUser } from '../../identity/model.ts';

export type GoogleUser = admin_directory_v1.Schema$User;
export type Mapped<T> = { ok: true; value: T } | { ok: false; reason: string };

/** The user fields requested (partial response); everything mapped below comes from these. */
export const USER_FIELDS =
  'id,primaryEmail,name(givenName,familyName,fullName),suspended,archived,isAdmin,orgUnitPath,aliases,nonEditableAliases,emails,organizations,externalIds,customSchemas,customerId';

function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string' && x.trim() !== '') : [];
}

export function mapGoogleUser(u: GoogleUser): Mapped<NormalizedUser> {
  if (typeof u.id !== 'string' || u.id === '') return { ok: false, reason: 'missing id' };
  if (typeof u.primaryEmail !== 'string' || u.primaryEmail.trim() === '') return { ok: false, reason: 'missing primaryEmail' };
  const primary = u.primaryEmail.trim();
  const aliases = strings(u.aliases);
  const nonEditableAliases = strings(u.nonEditableAliases);
  const aliasSet = new Set([...aliases, ...nonEditableAliases].map((a) => a.toLowerCase()));
  const emails = [primary];
  const seen = new Set([primary.toLowerCase()]);
  for (const e of Array.isArray(u.emails) ? (u.emails as Array<{ address?: unknown }>) : []) {
    const a = typeof e?.address === 'string' ? e.address.trim() : '';
    if (a === '' || seen.has(a.toLowerCase()) || aliasSet.has(a.toLowerCase())) continue;
    seen.add(a.toLowerCase());
    emails.push(a);
  }
  const suspended = u.suspended === true;
  const archived = u.archived === true;
  // Multi-valued as SCIM has them ({ value }), so scope filters can say `aliases.value eq "…"`.
  const attributes: Record<string, unknown> = {
    googleId: u.id,
    orgUnitPath: u.orgUnitPath ?? '/',
    aliases: aliases.map((value) => ({ value })),
    suspended,
    archived,
    isAdmin: u.isAdmin === true,
  };
  if (nonEditableAliases.length > 0) attributes['nonEditableAliases'] = nonEditableAliases.map((value) => ({ value }));
  const orgs = Array.isArray(u.organizations) ? (u.organizations as admin_directory_v1.Schema$UserOrganization[]) : [];
  const org = orgs.find((o) => o.primary) ?? orgs[0];
  for (const k of ['department', 'title', 'costCenter'] as const) if (typeof org?.[k] === 'string' && org[k] !== '') attributes[k] = org[k];
  const ids = Array.isArray(u.externalIds) ? (u.externalIds as admin_directory_v1.Schema$UserExternalId[]) : [];
  const employeeId = ids.find((x) => x.type === 'organization')?.value;
  if (typeof employeeId === 'string' && employeeId !== '') attributes['employeeId'] = employeeId;
  if (u.customSchemas && typeof u.customSchemas === 'object') attributes['customSchemas'] = u.customSchemas;

  const user: NormalizedUser = { externalId: u.id, userName: primary, emails, active: !suspended && !archived, attributes };
  if (u.name?.givenName) user.givenName = u.name.givenName;
  if (u.name?.familyName) user.familyName = u.name.familyName;
  if (u.name?.fullName) user.displayName = u.name.fullName;
  return { ok: true, value: user };
}
