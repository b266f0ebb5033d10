/**
 * Okta groups and their members. Okta groups do not nest, so there is nothing to flatten:
 * each selected group (Okta groups and application groups by default, optionally the
 * BUILT_IN "Everyone") and the users GET /groups/{id}/users lists for it — direct
 * assignments and group rules' results alike, which is how the API exposes rules.
 * Member lists are read a few groups at a time; one failed page fails the read.
 */
import type { Client } from '@okta/okta-sdk-nodejs';
import { DuplicateIndex } from '../../identity/duplicates.ts';
import type { NormalizedGroup, SourceRejection } from '../../identity/model.ts';
import { validateGroup } from '../../identity/validate-user.ts';
import { isoOf, type OktaGroupLike, type OktaUserLike } from './map.ts';

export interface GroupsSpec {
  types: readonly string[];
  search?: string | undefined;
  concurrency: number;
  /** Only groups whose lastUpdated or lastMembershipUpdated is after this instant (change reads). */
  changedSince?: string | undefined;
  /** Change reads: groups already reported at these versions (`groupVersionKey`) are skipped. */
  skip?: ReadonlySet<string> | undefined;
}

/** A group's version: its id and both timestamps (a change to either is a new version). */
export function groupVersionKey(g: OktaGroupLike): string {
  return `${g.id ?? ''}@${isoOf(g.lastUpdated) ?? ''}@${isoOf(g.lastMembershipUpdated) ?? ''}`;
}

export interface GroupsStats {
  groupsRead: number;
  memberPages: number;
  membersOutsideScope: number;
  membersRejected: number;
  appGroups: number;
}

export interface GroupsResult {
  groups: NormalizedGroup[];
  stats: GroupsStats;
  /** The latest lastUpdated / lastMembershipUpdated seen (ISO 8601). */
  latest: string | undefined;
  /** Change reads: the version of each group returned, with its latest timestamp (ms). */
  versions: Array<{ key: string; at: number }>;
}

type RawCollection = new (
  http: unknown,
  uri: string,
  factory: object,
  request: { method: string; headers: Record<string, string> },
) => AsyncIterable<unknown>;

/**
 * GET /groups/{id}/users through the SDK's own Collection and Http (its auth, its `Link`
 * paging, our executor), as plain JSON: only the member ids are used, and turning every
 * member into the SDK's User model was a quarter of a large read's CPU.
 */
async function memberList(client: Client, groupId: string): Promise<AsyncIterable<unknown>> {
  const { Collection } = await import('@okta/okta-sdk-nodejs');
  const c = client as unknown as { http: unknown; baseUrl: string };
  const uri = `${c.baseUrl}/api/v1/groups/${encodeURIComponent(groupId)}/users?limit=1000`;
  return new (Collection as unknown as RawCollection)(c.http, uri, {}, { method: 'get', headers: { Accept: 'application/json' } });
}

/** `(type eq "OKTA_GROUP" or type eq "APP_GROUP") and (<search>)`. */
export function groupSearch(spec: GroupsSpec): string {
  const parts = [`(${spec.types.map((t) => `type eq "${t}"`).join(' or ')})`];
  if (spec.search) parts.push(`(${spec.search})`);
  if (spec.changedSince) parts.push(`(lastUpdated gt "${spec.changedSince}" or lastMembershipUpdated gt "${spec.changedSince}")`);
  return parts.join(' and ');
}

/**
 * `userIds`: accepted users' Okta ids (members outside them are skipped and counted); undefined
 * on a change read, where every member Okta lists is kept (the caller resolves them).
 */
export async function readGroups(
  client: Client,
  spec: GroupsSpec,
  userIds: ReadonlySet<string> | undefined,
  rejectedUserIds: ReadonlySet<string>,
  rejected: SourceRejection[],
): Promise<GroupsResult> {
  const selected: OktaGroupLike[] = [];
  const coll = await client.groupApi.listGroups({ search: groupSearch(spec), limit: 200 });
  const versions: Array<{ key: string; at: number }> = [];
  for await (const g of coll) {
    if (!g) continue;
    const raw = g as unknown as OktaGroupLike;
    const key = groupVersionKey(raw);
    if (spec.skip?.has(key)) continue;
    const at = Math.max(Date.parse(isoOf(raw.lastUpdated) ?? '') || 0, Date.parse(isoOf(raw.lastMembershipUpdated) ?? '') || 0);
    if (spec.changedSince !== undefined) versions.push({ key, at });
    selected.push(raw);
  }
  let latest: string | undefined;
  const later = (v: Date | string | undefined): void => {
    const t = isoOf(v);
    if (t !== undefined && (latest === undefined || Date.parse(t) > Date.parse(latest))) latest = t;
  };

  const index = new DuplicateIndex<{ ref: string; displayName: string }>('displayName', (g) => ({ ref: g.ref, name: g.displayName }));
  const accepted: Array<{ group: NormalizedGroup; ref: string }> = [];
  const seen = new Set<string>();
  let appGroups = 0;
  for (const g of selected) {
    later(g.lastUpdated);
    later(g.lastMembershipUpdated);
    const name = typeof g.profile?.name === 'string' ? g.profile.name.trim() : '';
    const ref = name || g.id || '(unknown group)';
    if (typeof g.id === 'string' && seen.has(g.id)) continue; // listed twice across pages
    let reason: string | undefined;
    if (typeof g.id !== 'string' || g.id === '') reason = 'missing id';
    else if (name === '') reason = 'missing profile.name';
    const checked = reason === undefined ? validateGroup({ externalId: g.id as string, displayName: name }) : undefined;
    if (checked) reason = checked.ok ? index.reason(checked.value.externalId, checked.value.displayName) : checked.reason;
    if (reason !== undefined || !checked?.ok) {
      rejected.push({
        kind: 'group',
        ref,
        reason: reason ?? 'unreadable',
        ...(typeof g.id === 'string' && g.id !== '' ? { externalId: g.id } : {}),
        ...(name ? { displayName: name } : {}),
      });
      continue;
    }
    seen.add(checked.value.externalId);
    index.add(checked.value.externalId, checked.value.displayName, { ref, displayName: checked.value.displayName });
    if (g.type === 'APP_GROUP') appGroups++;
    accepted.push({ group: { externalId: checked.value.externalId, displayName: checked.value.displayName, members: [] }, ref });
  }

  const stats: GroupsStats = { groupsRead: selected.length, memberPages: 0, membersOutsideScope: 0, membersRejected: 0, appGroups };
  const queue = [...accepted];
  let failed = false;
  const readMembers = async (a: { group: NormalizedGroup }): Promise<void> => {
    const members = new Set<string>();
    const list = await memberList(client, a.group.externalId);
    let n = 0;
    for await (const u of list) {
      const id = (u as OktaUserLike | null)?.id;
      if (typeof id !== 'string') continue;
      n++;
      if (userIds === undefined || userIds.has(id)) members.add(id);
      else if (rejectedUserIds.has(id)) stats.membersRejected++;
      else stats.membersOutsideScope++;
    }
    stats.memberPages += Math.max(1, Math.ceil(n / 1000));
    a.group.members = [...members];
  };
  const worker = async (): Promise<void> => {
    try {
      for (let a = queue.shift(); a !== undefined && !failed; a = queue.shift()) await readMembers(a);
    } catch (e) {
      failed = true; // the read is lost anyway: the other workers stop asking Okta
      throw e;
    }
  };
  await Promise.all(Array.from({ length: Math.min(spec.concurrency, Math.max(1, queue.length)) }, worker));
  return { groups: accepted.map((a) => a.group), stats, latest, versions };
}
