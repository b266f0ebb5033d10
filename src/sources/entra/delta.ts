/**
 * Graph delta queries (`users/delta`, `groups/delta` with `members@delta`): what changed in
 * the tenant since a cursor. The cursor is the pair of delta links Graph handed out, as an
 * opaque string the caller keeps in the tenant state. No cursor, an expired one (410), or a
 * change Graph reports in a form that cannot be applied alone (a group nested in or taken
 * out of another) is answered by a full read and a fresh cursor — never by a guess.
 * A round names the groups whose members changed; the source reads those groups whole
 * (changes.ts' contract: a changed group carries its complete member list).
 */
import type { NormalizedUser, SourceRejection } from '../../identity/model.ts';
import { validateUser } from '../../identity/validate-user.ts';
import { SourceError, isSyncError } from '../../errors.ts';
import type { GraphClient } from './graph.ts';
import { GROUP_SELECT, memberKind, type GraphGroup, type GraphMember } from './groups.ts';
import { mapGraphUser, type GraphUser } from './map.ts';
import type { EntraIdSourceConfig } from './schema.ts';

export interface GroupChange {
  externalId: string;
  /** Present when the group itself (not only its members) changed. */
  displayName?: string;
  membersAdded: string[];
  membersRemoved: string[];
}

/** One delta round as Graph reports it: member additions and removals per group. */
export interface DeltaRound {
  kind: 'delta';
  users: { upserted: NormalizedUser[]; removed: string[] };
  groups: { changed: GroupChange[]; removed: string[] };
  rejected: SourceRejection[];
  cursor: string;
}

interface Cursor {
  v: 1;
  users: string;
  groups?: string;
  /** Groups that are members of other groups at the last full read: a change to one reaches its parents. */
  nested?: string[];
}

export function encodeCursor(c: Omit<Cursor, 'v'>): string {
  return JSON.stringify({ v: 1, ...c });
}

export function decodeCursor(raw: string, graph: GraphClient): Cursor {
  let c: unknown;
  try {
    c = JSON.parse(raw);
  } catch {
    throw new SourceError('Entra delta cursor is not JSON: discard it (the next round reads in full)');
  }
  const o = c as Partial<Cursor>;
  if (
    o?.v !== 1 ||
    typeof o.users !== 'string' ||
    (o.groups !== undefined && typeof o.groups !== 'string') ||
    (o.nested !== undefined && !(Array.isArray(o.nested) && o.nested.every((x) => typeof x === 'string')))
  )
    throw new SourceError('Entra delta cursor has an unknown shape: discard it (the next round reads in full)');
  graph.url(o.users);
  if (o.groups) graph.url(o.groups);
  return o as Cursor;
}

export interface DeltaInput {
  graph: GraphClient;
  config: EntraIdSourceConfig;
  select: string[];
  extra: string[];
}

/** Fresh delta links: the initial rounds, paged through to their delta links (their content is the full read's). */
export async function startDelta(d: DeltaInput): Promise<Omit<Cursor, 'v' | 'nested'>> {
  const users = await d.graph.listAll(`/v1.0/users/delta?$select=${d.select.join(',')}`, 'users/delta', () => undefined, {
    maxPageSize: d.config.pageSize,
  });
  let groups: string | undefined;
  if (d.config.groups !== false)
    groups = (
      await d.graph.listAll(`/v1.0/groups/delta?$select=${GROUP_SELECT},members`, 'groups/delta', () => undefined, {
        maxPageSize: d.config.pageSize,
      })
    ).deltaLink;
  if (users.deltaLink === undefined || (d.config.groups !== false && groups === undefined))
    throw new SourceError('Graph ended a delta round without a delta link; nothing was changed');
  return { users: users.deltaLink, ...(groups ? { groups } : {}) };
}

const removedOf = (o: Record<string, unknown>): boolean => o['@removed'] !== undefined && o['@removed'] !== null;

/** One delta round from a cursor. Throws `expired` (status 410) for the caller to start over. */
export async function readDelta(d: DeltaInput, cursor: Cursor): Promise<DeltaRound | { kind: 'nesting changed' }> {
  const upserted: NormalizedUser[] = [];
  const removed: string[] = [];
  const rejected: SourceRejection[] = [];
  const changed: GraphUser[] = [];
  const users = await d.graph.listAll<GraphUser>(cursor.users, 'users/delta', (items) => {
    for (const u of items) {
      if (typeof u['id'] !== 'string') continue;
      if (removedOf(u)) removed.push(u['id']);
      else changed.push(u);
    }
  });
  for (const raw of changed) {
    // Graph promises "at least the changed properties": a partial user is fetched whole.
    let u = raw;
    if (typeof u['userPrincipalName'] !== 'string' || typeof u['accountEnabled'] !== 'boolean') {
      try {
        u = await d.graph.get(
          `/v1.0/users/${encodeURIComponent(String(raw['id']))}?$select=${d.select.join(',')}`,
          `user ${String(raw['id'])}`,
        );
      } catch (e) {
        if (isSyncError(e) && e.status === 404) {
          removed.push(String(raw['id']));
          continue;
        }
        throw e;
      }
    }
    const m = mapGraphUser(u, d.extra);
    const checked = m.ok ? validateUser(m.value) : m;
    if (!checked.ok) {
      rejected.push({
        kind: 'user',
        ref: String(u['userPrincipalName'] ?? u['id']),
        reason: checked.reason,
        externalId: String(u['id']),
        ...(typeof u['userPrincipalName'] === 'string' ? { userName: u['userPrincipalName'] } : {}),
      });
      continue;
    }
    upserted.push(checked.value);
  }
  const groupChanges: GroupChange[] = [];
  const groupsRemoved: string[] = [];
  let groupsLink: string | undefined;
  let nestingChanged = false;
  const spec = d.config.groups;
  if (spec !== false && cursor.groups) {
    const kinds = new Set(spec.types);
    const ids = spec.ids ? new Set(spec.ids) : undefined;
    const byId = new Map<string, GroupChange>();
    groupsLink = (
      await d.graph.listAll<GraphGroup & Record<string, unknown>>(cursor.groups, 'groups/delta', (items) => {
        for (const g of items) {
          if (typeof g.id !== 'string' || (ids && !ids.has(g.id))) continue;
          if (removedOf(g)) {
            groupsRemoved.push(g.id);
            continue;
          }
          const unified = Array.isArray(g.groupTypes) && g.groupTypes.includes('Unified');
          if (g.securityEnabled !== undefined || g.groupTypes !== undefined) {
            const wanted = (kinds.has('security') && g.securityEnabled === true && !unified) || (kinds.has('microsoft365') && unified);
            if (!wanted) continue;
          }
          // Graph may split one group's member changes over several entries: merge them.
          const c = byId.get(g.id) ?? { externalId: g.id, membersAdded: [], membersRemoved: [] };
          byId.set(g.id, c);
          if (typeof g.displayName === 'string') c.displayName = g.displayName;
          for (const m of (g['members@delta'] as GraphMember[] | undefined) ?? []) {
            if (typeof m.id !== 'string') continue;
            if (memberKind(m) === 'group') {
              if (spec.members !== 'direct') nestingChanged = true;
              continue;
            }
            if (memberKind(m) !== 'user') continue;
            (removedOf(m as Record<string, unknown>) ? c.membersRemoved : c.membersAdded).push(m.id);
          }
        }
      })
    ).deltaLink;
    groupChanges.push(...byId.values());
  }
  // A user added to or removed from a nested group changes its parents' flattened members too.
  const nested = new Set(cursor.nested ?? []);
  if (nestingChanged || (spec !== false && spec.members !== 'direct' && groupChanges.some((g) => nested.has(g.externalId))))
    return { kind: 'nesting changed' };
  if (users.deltaLink === undefined || (spec !== false && cursor.groups && groupsLink === undefined))
    throw new SourceError('Graph ended a delta round without a delta link; nothing was changed');
  return {
    kind: 'delta',
    users: { upserted, removed },
    groups: { changed: groupChanges, removed: groupsRemoved },
    rejected,
    cursor: encodeCursor({
      users: users.deltaLink,
      ...(groupsLink ? { groups: groupsLink } : {}),
      ...(cursor.nested ? { nested: cursor.nested } : {}),
    }),
  };
}
