/**
 * diffDesired: what changed between two complete reads of the same source, as a SourceDelta
 * (changes.ts). Used by every source that sees changes by reading again (the file and CSV
 * sources re-read a changed file; a source whose change feed names objects reads those
 * objects whole). Records are compared whole: a user is upserted when any field differs, a
 * group when its name or its member *set* differs (member order carries no meaning).
 *
 * A user that turned invalid is not "removed": it stays named by a rejection in `next`, and
 * the planner protects its platform account (reconcile.md, "Present but invalid").
 */
import { isDeepStrictEqual } from 'node:util';
import type { DesiredState, NormalizedGroup, SourceRejection } from '../identity/model.ts';
import { emptyDelta, type SourceDelta } from './changes.ts';

export interface DiffOptions {
  /** The cursor the delta carries (the caller's, for the read `next` came from). */
  cursor: string;
  /** When the directory says the change happened (epoch ms), applied to every changed object. */
  changedAtMs?: number | undefined;
}

type Comparable = Pick<DesiredState, 'users' | 'groups' | 'rejected'>;

export function diffDesired(prev: Comparable, next: Comparable, opts: DiffOptions): SourceDelta {
  const delta = emptyDelta(opts.cursor);
  const stillNamed = new Set<string>();
  for (const r of next.rejected) if (r.externalId !== undefined && r.member === undefined) stillNamed.add(r.externalId);

  const prevUsers = new Map(prev.users.map((u) => [u.externalId, u]));
  for (const u of next.users) {
    const before = prevUsers.get(u.externalId);
    prevUsers.delete(u.externalId);
    if (before === undefined || !isDeepStrictEqual(before, u)) delta.users.upserted.push(u);
  }
  for (const id of prevUsers.keys()) if (!stillNamed.has(id)) delta.users.removed.push(id);

  const prevGroups = new Map(prev.groups.map((g) => [g.externalId, g]));
  for (const g of next.groups) {
    const before = prevGroups.get(g.externalId);
    prevGroups.delete(g.externalId);
    if (before === undefined || !sameGroup(before, g)) delta.groups.upserted.push(g);
  }
  for (const id of prevGroups.keys()) if (!stillNamed.has(id)) delta.groups.removed.push(id);

  const known = new Set(prev.rejected.map(rejectionKey));
  for (const r of next.rejected) if (!known.has(rejectionKey(r))) delta.rejected.push(r);

  if (opts.changedAtMs !== undefined) {
    const at = opts.changedAtMs;
    for (const u of delta.users.upserted) delta.changedAt[u.externalId] = at;
    for (const g of delta.groups.upserted) delta.changedAt[g.externalId] = at;
    for (const id of [...delta.users.removed, ...delta.groups.removed]) delta.changedAt[id] = at;
    for (const r of delta.rejected) if (r.externalId !== undefined) delta.changedAt[r.externalId] = at;
  }
  return delta;
}

function sameGroup(a: NormalizedGroup, b: NormalizedGroup): boolean {
  if (a.displayName !== b.displayName || a.members.length !== b.members.length) return false;
  const members = new Set(a.members);
  return b.members.every((m) => members.has(m));
}

function rejectionKey(r: SourceRejection): string {
  return JSON.stringify([r.kind, r.ref, r.reason, r.externalId ?? null, r.userName ?? null, r.displayName ?? null, r.member ?? null]);
}
