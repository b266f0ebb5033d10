/**
 * SCIM resources of the source server → the normalized model. The source's own `externalId`
 * is kept when set (it usually is the upstream HR/IdP id), else its `id`; group members are
 * translated from the source's ids to those externalIds, nested groups flattened.
 */
import type { NormalizedGroup, NormalizedUser } from '../../identity/model.ts';
import { SCHEMA_ENTERPRISE_USER, type ScimGroup, type ScimUser } from '../../platform/scim/types.ts';

export type MappedUser = { ok: true; user: NormalizedUser } | { ok: false; reason: string };

export function mapScimUser(u: ScimUser): MappedUser {
  if (typeof u.userName !== 'string' || u.userName.trim() === '') return { ok: false, reason: 'missing userName' };
  const emails = [...(u.emails ?? [])]
    .filter((e) => typeof e?.value === 'string' && e.value.trim() !== '')
    .sort((a, b) => Number(b.primary === true) - Number(a.primary === true))
    .map((e) => e.value.trim());
  const attributes: Record<string, unknown> = { scimId: u.id };
  for (const k of ['title', 'userType', 'preferredLanguage', 'locale', 'timezone'] as const)
    if (typeof u[k] === 'string') attributes[k] = u[k];
  const ent = u[SCHEMA_ENTERPRISE_USER] as Record<string, unknown> | undefined;
  if (ent && typeof ent === 'object') {
    for (const k of ['employeeNumber', 'costCenter', 'organization', 'division', 'department'] as const)
      if (typeof ent[k] === 'string') attributes[k] = ent[k];
    const manager = ent['manager'] as { value?: unknown } | undefined;
    if (typeof manager?.value === 'string') attributes['manager'] = manager.value;
  }
  const user: NormalizedUser = {
    externalId: typeof u.externalId === 'string' && u.externalId !== '' ? u.externalId : u.id,
    userName: u.userName.trim(),
    emails: [...new Set(emails)],
    active: u.active !== false,
    attributes,
  };
  const types = Object.fromEntries(
    (u.emails ?? [])
      .filter((e) => typeof e?.type === 'string' && e.type !== '' && typeof e.value === 'string')
      .map((e) => [e.value.trim(), e.type as string]),
  );
  if (Object.keys(types).length > 0) user.emailTypes = types;
  if (u.name?.givenName) user.givenName = u.name.givenName;
  if (u.name?.familyName) user.familyName = u.name.familyName;
  if (typeof u.displayName === 'string' && u.displayName !== '') user.displayName = u.displayName;
  return { ok: true, user };
}

export interface GroupMapping {
  groups: NormalizedGroup[];
  membersOutsideScope: number;
  groupsInCycles: number;
}

/** `userIds`: source id → normalized externalId of accepted users. */
export function mapScimGroups(groups: ScimGroup[], userIds: ReadonlyMap<string, string>): GroupMapping {
  const byId = new Map(groups.map((g) => [g.id, g]));
  let membersOutsideScope = 0;
  let groupsInCycles = 0;
  const direct = new Map<string, { users: Set<string>; kids: string[] }>();
  for (const g of groups) {
    const users = new Set<string>();
    const kids: string[] = [];
    for (const m of g.members ?? []) {
      const user = userIds.get(m.value);
      if (user !== undefined) users.add(user);
      else if (byId.has(m.value)) kids.push(m.value);
      else membersOutsideScope++;
    }
    direct.set(g.id, { users, kids });
  }
  const out = groups.map((g) => {
    const members = new Set(direct.get(g.id)?.users);
    const seen = new Set([g.id]);
    const stack = [...(direct.get(g.id)?.kids ?? [])];
    let cycle = false;
    while (stack.length) {
      const k = stack.pop() as string;
      if (k === g.id) cycle = true;
      if (seen.has(k)) continue;
      seen.add(k);
      const d = direct.get(k);
      d?.users.forEach((u) => members.add(u));
      stack.push(...(d?.kids ?? []));
    }
    if (cycle) groupsInCycles++;
    return {
      externalId: typeof g.externalId === 'string' && g.externalId !== '' ? g.externalId : g.id,
      displayName: g.displayName,
      members: [...members],
    };
  });
  return { groups: out, membersOutsideScope, groupsInCycles };
}
