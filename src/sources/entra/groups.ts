/**
 * Groups and their members: the selected groups (a `$filter` or an explicit id list, then
 * the configured kinds: security and/or Microsoft 365), their members (direct, with every
 * nested group read too so flattening sees the whole tree; or Graph's transitive list), a
 * few groups in parallel. Flattening and cycle cutting are the LDAP source's
 * (ldap/flatten.ts), on object ids instead of DNs.
 */
import { DuplicateIndex } from '../../identity/duplicates.ts';
import type { NormalizedGroup, SourceRejection } from '../../identity/model.ts';
import { validateGroup } from '../../identity/validate-user.ts';
import { SourceError, isSyncError } from '../../errors.ts';
import { resolveMemberships, type MembershipStats } from '../ldap/flatten.ts';
import type { RawGroup } from '../ldap/map.ts';
import type { GraphClient } from './graph.ts';
import type { EntraIdSourceConfig } from './schema.ts';

type GroupsSpec = Exclude<EntraIdSourceConfig['groups'], false>;
export interface GraphGroup {
  id?: unknown;
  displayName?: unknown;
  securityEnabled?: unknown;
  groupTypes?: unknown;
}
export interface GraphMember {
  '@odata.type'?: unknown;
  id?: unknown;
}

export const GROUP_SELECT = 'id,displayName,securityEnabled,groupTypes';

export interface GroupsInput {
  graph: GraphClient;
  spec: GroupsSpec;
  pageSize: number;
  concurrency: number;
  /** Accepted users' object ids (= externalIds). */
  userIds: ReadonlySet<string>;
  rejectedUserIds: ReadonlySet<string>;
  rejected: SourceRejection[];
}

export interface GroupsResult {
  groups: NormalizedGroup[];
  /** Groups that are members of another group read (for delta rounds: their changes reach the parents). */
  nestedGroupIds: string[];
  stats: MembershipStats & {
    groupsRead: number;
    groupPages: number;
    memberPages: number;
    nestedGroupsRead: number;
    groupsOfOtherKinds: number;
  };
}

const isUnified = (g: GraphGroup): boolean => Array.isArray(g.groupTypes) && g.groupTypes.includes('Unified');
export const memberKind = (m: GraphMember): 'user' | 'group' | 'other' =>
  m['@odata.type'] === '#microsoft.graph.user' ? 'user' : m['@odata.type'] === '#microsoft.graph.group' ? 'group' : 'other';

/** One group by object id; a missing group fails the read (it is never "no members"). */
export async function getGroup(graph: GraphClient, id: string, key: string): Promise<GraphGroup> {
  try {
    return await graph.get(`/v1.0/groups/${encodeURIComponent(id)}?$select=${GROUP_SELECT}`, `group ${id}`);
  } catch (e) {
    if (isSyncError(e) && e.status === 404)
      throw new SourceError(
        `${key}: group ${id} does not exist in this tenant: fix the list (a missing group is never read as "no members")`,
        { cause: e },
      );
    throw e;
  }
}

/** Every member of a group (`members` or `transitiveMembers`), all pages. */
export async function listMembers(
  graph: GraphClient,
  id: string,
  transitive: boolean,
  pageSize: number,
): Promise<{ members: GraphMember[]; pages: number }> {
  const members: GraphMember[] = [];
  const rel = transitive ? 'transitiveMembers' : 'members';
  const { pages } = await graph.listAll<GraphMember>(
    `/v1.0/groups/${encodeURIComponent(id)}/${rel}?$select=id&$top=${pageSize}`,
    `${rel} of group ${id}`,
    (items) => {
      members.push(...items);
    },
  );
  return { members, pages };
}

export async function readGroups(input: GroupsInput): Promise<GroupsResult> {
  const { graph, spec } = input;
  const listed: GraphGroup[] = [];
  let groupPages = 0;
  if (spec.ids) {
    for (const id of spec.ids) listed.push(await getGroup(graph, id, 'groups.ids'));
    groupPages = spec.ids.length;
  } else {
    const filter = spec.filter ? `&$filter=${encodeURIComponent(spec.filter)}` : '';
    groupPages = (
      await graph.listAll<GraphGroup>(`/v1.0/groups?$select=${GROUP_SELECT}&$top=${input.pageSize}${filter}`, 'groups', (items) => {
        listed.push(...items);
      })
    ).pages;
  }
  const kinds = new Set(spec.types);
  const selected = listed.filter(
    (g) => (kinds.has('security') && g.securityEnabled === true && !isUnified(g)) || (kinds.has('microsoft365') && isUnified(g)),
  );
  const groupsOfOtherKinds = listed.length - selected.length;

  const members = new Map<string, GraphMember[]>();
  const queue: string[] = [];
  const enqueue = (id: unknown): void => {
    if (typeof id === 'string' && id !== '' && !members.has(id) && !queue.includes(id)) queue.push(id);
  };
  for (const g of selected) enqueue(g.id);
  let memberPages = 0;
  const transitive = spec.members === 'transitive';
  const readOne = async (id: string): Promise<void> => {
    members.set(id, []);
    const r = await listMembers(graph, id, transitive, input.pageSize);
    members.set(id, r.members);
    memberPages += r.pages;
    if (spec.members === 'flatten') for (const m of r.members) if (memberKind(m) === 'group') enqueue(m.id);
  };
  let failed = false;
  const worker = async (): Promise<void> => {
    try {
      for (let id = queue.shift(); id !== undefined && !failed; id = queue.shift()) await readOne(id);
    } catch (e) {
      failed = true; // the read is lost anyway: the other workers stop asking Graph
      throw e;
    }
  };
  while (queue.length > 0) await Promise.all(Array.from({ length: Math.min(input.concurrency, queue.length) }, worker));
  const result = flatten(selected, members, input);
  const nestedGroupIds = new Set<string>();
  for (const list of members.values())
    for (const m of list) if (memberKind(m) === 'group' && typeof m.id === 'string') nestedGroupIds.add(m.id);
  return {
    groups: result.groups,
    nestedGroupIds: [...nestedGroupIds],
    stats: { ...result.stats, groupsRead: listed.length, groupPages, memberPages, groupsOfOtherKinds },
  };
}

function flatten(
  selected: GraphGroup[],
  members: Map<string, GraphMember[]>,
  input: GroupsInput,
): { groups: NormalizedGroup[]; stats: MembershipStats & { nestedGroupsRead: number } } {
  const nested = input.spec.members === 'flatten';
  const valuesOf = (id: string): string[] =>
    (members.get(id) ?? [])
      .filter((m) => typeof m.id === 'string' && (memberKind(m) === 'user' || (nested && memberKind(m) === 'group')))
      .map((m) => m.id as string);
  const selectedIds = new Set<string>();
  const index = new DuplicateIndex<{ ref: string; displayName: string }>('displayName', (g) => ({ ref: g.ref, name: g.displayName }));
  const raw: RawGroup[] = [];
  for (const g of selected) {
    const id = typeof g.id === 'string' && g.id !== '' ? g.id : undefined;
    const name = typeof g.displayName === 'string' ? g.displayName.trim() : '';
    if (id !== undefined && selectedIds.has(id)) continue;
    let reason: string | undefined = id === undefined ? 'missing id' : name === '' ? 'missing displayName' : undefined;
    const checked = reason === undefined && id !== undefined ? validateGroup({ externalId: id, displayName: name }) : undefined;
    if (checked) reason = checked.ok ? index.reason(checked.value.externalId, checked.value.displayName) : checked.reason;
    if (reason !== undefined || !checked?.ok) {
      input.rejected.push({
        kind: 'group',
        ref: id ?? name ?? '(unknown group)',
        reason: reason ?? 'unreadable',
        ...(id !== undefined ? { externalId: id } : {}),
        ...(name ? { displayName: name } : {}),
      });
      continue;
    }
    const { externalId, displayName } = checked.value;
    selectedIds.add(externalId);
    index.add(externalId, displayName, { ref: externalId, displayName });
    raw.push({ dn: externalId, externalId, displayName, memberValues: valuesOf(externalId) });
  }
  // Nested groups read only for their members: walked through, never provisioned themselves.
  let nestedGroupsRead = 0;
  for (const id of members.keys()) {
    if (selectedIds.has(id)) continue;
    nestedGroupsRead++;
    raw.push({ dn: id, externalId: id, displayName: id, memberValues: valuesOf(id) });
  }
  const r = resolveMemberships({
    groups: raw,
    userByDn: new Map([...input.userIds].map((id) => [id.toLowerCase(), id])),
    userByUid: new Map(),
    rejectedUserDns: new Set([...input.rejectedUserIds].map((id) => id.toLowerCase())),
    memberAttribute: 'member',
    flattenNested: nested,
  });
  return { groups: r.groups.filter((g) => selectedIds.has(g.externalId)), stats: { ...r.stats, nestedGroupsRead } };
}
