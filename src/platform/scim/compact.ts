/**
 * A reconcile keeps every listed user and group in memory for the whole run (100k users:
 * ~1.3 KB each as the server sends them), so what nothing reads is dropped as each page
 * arrives: `meta`, a user's read-only `groups` (memberships come from the groups themselves)
 * and members' `display`/`$ref` (only `value` identifies a member). Given `attributes` (the
 * top-level names the mapping compares, identity/mapping.ts comparedUserAttributes), only `id`
 * and those are kept (names matched case-insensitively, as getPath reads them): ~400 bytes a
 * user instead of ~570 (bench:reconcile).
 *
 * Strings that repeat across the snapshot are kept once (`intern`): a user's id is also every
 * group's member value and the ledger's key (100,000 users + their memberships: 410,000 id
 * strings for 105,000 ids), and an address equal to the userName is the userName's string.
 */
import type { ScimGroup, ScimMember, ScimResource, ScimUser } from './types.ts';

/** Keeps `id` and the attributes named (case-insensitively); the values themselves are not copied. */
export function projection(attributes: readonly string[]): <T extends ScimResource>(r: T) => T {
  const keep = new Set(['id', ...attributes.map((a) => a.toLowerCase())]);
  return <T extends ScimResource>(r: T): T => {
    const out: Record<string, unknown> = {};
    for (const k in r) if (keep.has(k.toLowerCase())) out[k] = r[k];
    return out as T;
  };
}

/** The one copy of each string seen so far (for one snapshot; dropped with it). */
export type Intern = (s: string) => string;

export function createIntern(): Intern {
  const pool = new Map<string, string>();
  return (s) => {
    const held = pool.get(s);
    if (held !== undefined) return held;
    pool.set(s, s);
    return s;
  };
}

const keepAsIs: Intern = (s) => s;

export function compactUser(u: ScimUser, project?: (r: ScimUser) => ScimUser, intern: Intern = keepAsIs): ScimUser {
  let out: ScimUser;
  if (project) out = project(u);
  else {
    const { meta: _meta, groups: _groups, ...rest } = u;
    out = rest as ScimUser;
  }
  if (typeof out.id === 'string') out.id = intern(out.id);
  // Parsed for us alone: an address object can take the userName's string in place.
  const { userName, emails } = out;
  if (typeof userName === 'string' && Array.isArray(emails)) {
    for (const e of emails) if (e !== null && typeof e === 'object' && e.value === userName) e.value = userName;
  }
  return out;
}

export function compactGroup(group: ScimGroup, project?: (r: ScimGroup) => ScimGroup, intern: Intern = keepAsIs): ScimGroup {
  const g = project ? project(group) : group;
  const { meta: _meta, members, ...rest } = g;
  if (typeof rest.id === 'string') rest.id = intern(rest.id);
  if (!Array.isArray(members)) return (members === undefined ? rest : { ...rest, members }) as ScimGroup;
  const slim = members.map((m): ScimMember => {
    const value = typeof m.value === 'string' ? intern(m.value) : m.value;
    return m.type === undefined ? { value } : { value, type: m.type };
  });
  return { ...rest, members: slim } as ScimGroup;
}
