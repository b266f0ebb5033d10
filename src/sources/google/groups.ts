/**
 * Groups and their members: the selected groups (a search or an explicit list), the direct
 * members of each (paged, a few groups in parallel), and of every group nested inside them
 * even when it is not selected itself, so flattening sees the whole tree. Flattening and
 * cycle cutting are the LDAP source's (ldap/flatten.ts), on Google ids instead of DNs.
 */
import type { admin_directory_v1 } from '@googleapis/admin';
import { DuplicateIndex } from '../../identity/duplicates.ts';
import type { NormalizedGroup, SourceRejection } from '../../identity/model.ts';
import { validateGroup } from '../../identity/validate-user.ts';
import { SourceError } from '../../errors.ts';
import { resolveMemberships, type MembershipStats } from '../ldap/flatten.ts';
import type { RawGroup } from '../ldap/map.ts';
import { callApi, listAll, type CallEnv } from './paged.ts';

type Directory = admin_directory_v1.Admin;
type Group = admin_directory_v1.Schema$Group;
type Member = admin_directory_v1.Schema$Member;

export interface GroupsSpec {
  customer?: string | undefined;
  domain?: string | undefined;
  query?: string | undefined;
  emails?: string[] | undefined;
  flattenNested: boolean;
}

export interface GroupsInput {
  directory: Directory;
  env: CallEnv;
  spec: GroupsSpec;
  timeoutMs: number;
  concurrency: number;
  /** Accepted users' Google ids (= externalIds). */
  userIds: ReadonlySet<string>;
  /** Google ids of users that were read but rejected. */
  rejectedUserIds: ReadonlySet<string>;
  rejected: SourceRejection[];
}

export interface GroupsResult {
  groups: NormalizedGroup[];
  stats: MembershipStats & {
    groupsRead: number;
    groupPages: number;
    memberPages: number;
    nestedGroupsRead: number;
    customerMembers: number;
  };
}

const GROUP_FIELDS = 'id,email,name';
const MEMBER_FIELDS = 'nextPageToken,members(id,email,type,status)';

export async function readGroups(input: GroupsInput): Promise<GroupsResult> {
  const { directory, env, spec } = input;
  const opts = { retry: false, timeout: input.timeoutMs, ...(env.signal ? { signal: env.signal } : {}) };
  const selected: Group[] = [];
  let groupPages = 0;
  if (spec.emails) {
    for (const email of spec.emails) {
      try {
        selected.push(
          await callApi(`groups.get ${email}`, () => directory.groups.get({ groupKey: email, fields: GROUP_FIELDS }, opts), env),
        );
      } catch (e) {
        if ((e as { status?: number }).status === 404)
          throw new SourceError(
            `groups.emails: group ${email} does not exist in this Workspace: fix the list (a missing group is never read as "no members")`,
            { cause: e },
          );
        throw e;
      }
      groupPages++;
    }
  } else {
    const where = spec.domain !== undefined ? { domain: spec.domain } : { customer: spec.customer ?? 'my_customer' };
    groupPages = await listAll<Group>(
      'groups.list',
      'groups',
      (pageToken) =>
        directory.groups.list(
          {
            ...where,
            maxResults: 200,
            ...(spec.query ? { query: spec.query } : {}),
            ...(pageToken ? { pageToken } : {}),
            fields: `nextPageToken,groups(${GROUP_FIELDS})`,
          },
          opts,
        ),
      env,
      (items) => selected.push(...items),
    );
  }

  // Members of the selected groups, then of any nested group met along the way.
  const members = new Map<string, Member[]>();
  const queue: string[] = [];
  const enqueue = (id: string | null | undefined): void => {
    if (typeof id === 'string' && id !== '' && !members.has(id) && !queue.includes(id)) queue.push(id);
  };
  const emailOf = new Map<string, string>();
  for (const g of selected) {
    if (typeof g.id === 'string') emailOf.set(g.id, g.email ?? g.id);
    enqueue(g.id);
  }
  let memberPages = 0;
  const readOne = async (id: string): Promise<void> => {
    const list: Member[] = [];
    members.set(id, list);
    const pages = await listAll<Member>(
      `members.list ${emailOf.get(id) ?? id}`,
      'members',
      (pageToken) =>
        directory.members.list({ groupKey: id, maxResults: 200, ...(pageToken ? { pageToken } : {}), fields: MEMBER_FIELDS }, opts),
      env,
      (items) => list.push(...items),
    );
    memberPages += pages;
    if (spec.flattenNested) for (const m of list) if (m.type === 'GROUP') enqueue(m.id);
  };
  let failed = false;
  const worker = async (): Promise<void> => {
    try {
      for (let id = queue.shift(); id !== undefined && !failed; id = queue.shift()) await readOne(id);
    } catch (e) {
      failed = true; // the read is lost anyway: the other workers stop asking Google
      throw e;
    }
  };
  // Workers drain the queue; a nested group found late is picked up by whichever is still running.
  while (queue.length > 0) await Promise.all(Array.from({ length: Math.min(input.concurrency, queue.length) }, worker));

  return flatten(selected, members, input, groupPages, memberPages);
}

function flatten(
  selected: Group[],
  members: Map<string, Member[]>,
  input: GroupsInput,
  groupPages: number,
  memberPages: number,
): GroupsResult {
  const allUsers = [...input.userIds];
  let customerMembers = 0;
  const valuesOf = (id: string): string[] => {
    const out: string[] = [];
    for (const m of members.get(id) ?? []) {
      if (typeof m.id !== 'string') continue;
      if (m.type === 'CUSTOMER') {
        // "Everyone in the organisation": every user read (within users.query).
        customerMembers++;
        out.push(...allUsers);
      } else out.push(m.id);
    }
    return out;
  };
  const selectedIds = new Set<string>();
  const index = new DuplicateIndex<{ ref: string; displayName: string }>('displayName', (g) => ({ ref: g.ref, name: g.displayName }));
  const raw: RawGroup[] = [];
  for (const g of selected) {
    const ref = g.email ?? g.id ?? '(unknown group)';
    const name = (g.name ?? '').trim() || g.email;
    let reason: string | undefined;
    if (typeof g.id !== 'string' || g.id === '') reason = 'missing id';
    else if (!name) reason = 'missing name and email';
    else if (selectedIds.has(g.id)) continue; // the same group listed twice
    const checked =
      reason === undefined && typeof g.id === 'string' && name ? validateGroup({ externalId: g.id, displayName: name }) : undefined;
    if (checked) reason = checked.ok ? index.reason(checked.value.externalId, name as string) : checked.reason;
    if (reason !== undefined || !checked?.ok) {
      input.rejected.push({
        kind: 'group',
        ref,
        reason: reason ?? 'unreadable',
        ...(typeof g.id === 'string' && g.id !== '' ? { externalId: g.id } : {}),
        ...(name ? { displayName: name } : {}),
      });
      continue;
    }
    const { externalId, displayName } = checked.value;
    selectedIds.add(externalId);
    index.add(externalId, displayName, { ref, displayName });
    raw.push({ dn: externalId, externalId, displayName, memberValues: valuesOf(externalId) });
  }
  // Nested groups read only for their members: walked through, never provisioned themselves.
  let nestedGroupsRead = 0;
  for (const id of members.keys()) {
    if (selectedIds.has(id)) continue;
    nestedGroupsRead++;
    raw.push({ dn: id, externalId: id, displayName: id, memberValues: valuesOf(id) });
  }
  const userByDn = new Map(allUsers.map((id) => [id.toLowerCase(), id]));
  const rejectedUserDns = new Set([...input.rejectedUserIds].map((id) => id.toLowerCase()));
  const r = resolveMemberships({
    groups: raw,
    userByDn,
    userByUid: new Map(),
    rejectedUserDns,
    memberAttribute: 'member',
    flattenNested: input.spec.flattenNested,
  });
  const groups = r.groups.filter((g) => selectedIds.has(g.externalId));
  return { groups, stats: { ...r.stats, groupsRead: selected.length, groupPages, memberPages, nestedGroupsRead, customerMembers } };
}
