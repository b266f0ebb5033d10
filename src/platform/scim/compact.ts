/**
 * A reconcile keeps every listed user and group in memory for the whole run (100k users:
 * ~1.3 KB each as the server sends them), so server bookkeeping nothing reads is dropped as
 * each page arrives: `meta`, a user's read-only `groups` (memberships come from the groups
 * themselves) and members' `display`/`$ref` (only `value` identifies a member). Every
 * attribute a mapping could compare stays.
 */
import type { ScimGroup, ScimMember, ScimUser } from './types.ts';

export function compactUser(u: ScimUser): ScimUser {
  const { meta: _meta, groups: _groups, ...rest } = u;
  return rest as ScimUser;
}

export function compactGroup(g: ScimGroup): ScimGroup {
  const { meta: _meta, members, ...rest } = g;
  if (!Array.isArray(members)) return (members === undefined ? rest : { ...rest, members }) as ScimGroup;
  const slim = members.map((m): ScimMember => (m.type === undefined ? { value: m.value } : { value: m.value, type: m.type }));
  return { ...rest, members: slim } as ScimGroup;
}
