/**
 * Graph users → the normalized model. The immutable object id is the externalId (a renamed
 * userPrincipalName stays the same person); `accountEnabled: false` is inactive. Employee id,
 * the selected extra properties, on-premises extension attributes, directory extensions and
 * custom security attributes are kept under `attributes` for mapping and scoping.
 */
import type { NormalizedUser } from '../../identity/model.ts';
import type { EntraIdSourceConfig } from './schema.ts';

export type GraphUser = Record<string, unknown>;
export type Mapped<T> = { ok: true; value: T } | { ok: false; reason: string };

const CORE = ['id', 'userPrincipalName', 'accountEnabled', 'mail', 'givenName', 'surname', 'displayName', 'employeeId'];

/** The `$select` for users: the core properties and only the extras the config names. */
export function userSelect(c: Pick<EntraIdSourceConfig, 'users'>): string[] {
  const out = [...CORE, ...c.users.select];
  if (c.users.onPremisesExtensionAttributes) out.push('onPremisesExtensionAttributes');
  if (c.users.customSecurityAttributes) out.push('customSecurityAttributes');
  return [...new Set(out)];
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined);

export function mapGraphUser(u: GraphUser, extra: readonly string[]): Mapped<NormalizedUser> {
  const id = str(u['id']);
  if (id === undefined) return { ok: false, reason: 'missing id' };
  const upn = str(u['userPrincipalName']);
  if (upn === undefined) return { ok: false, reason: 'missing userPrincipalName' };
  if (typeof u['accountEnabled'] !== 'boolean') return { ok: false, reason: 'missing accountEnabled' };
  const mail = str(u['mail']);
  // A guest's UPN (`name_example.com#EXT#@tenant…`) is no address; mail is then the only one.
  const emails = mail !== undefined ? [mail] : /^[^#\s@]+@[^\s@]+$/.test(upn) ? [upn] : [];
  const attributes: Record<string, unknown> = { entraId: id, accountEnabled: u['accountEnabled'], userPrincipalName: upn };
  const employeeId = str(u['employeeId']);
  if (employeeId !== undefined) attributes['employeeId'] = employeeId;
  const extensions: Record<string, unknown> = {};
  for (const name of extra) {
    const v = u[name];
    if (v === undefined || v === null) continue;
    attributes[name] = v;
    // `extension_<appId>_costCenter` is also `extensions.costCenter`.
    const short = /^extension_[0-9a-f]{32}_(.+)$/i.exec(name)?.[1];
    if (short !== undefined) extensions[short] = v;
  }
  if (Object.keys(extensions).length > 0) attributes['extensions'] = extensions;
  const onPrem = u['onPremisesExtensionAttributes'];
  if (onPrem !== null && typeof onPrem === 'object') attributes['onPremisesExtensionAttributes'] = onPrem;
  const csa = u['customSecurityAttributes'];
  if (csa !== null && typeof csa === 'object') attributes['customSecurityAttributes'] = csa;

  const user: NormalizedUser = { externalId: id, userName: upn, emails, active: u['accountEnabled'] === true, attributes };
  const given = str(u['givenName']);
  const family = str(u['surname']);
  const display = str(u['displayName']);
  if (given !== undefined) user.givenName = given;
  if (family !== undefined) user.familyName = family;
  if (display !== undefined) user.displayName = display;
  return { ok: true, value: user };
}
