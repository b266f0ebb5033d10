/**
 * Coalescing: changes that arrive within the batch window become one delta, with the latest
 * complete record of each identity (a later upsert replaces an earlier one or a removal, a
 * later removal replaces an earlier upsert). Applying the merged delta is the same as applying
 * both in order, since records are complete (sources/changes.ts).
 */
import type { NormalizedGroup, NormalizedUser, SourceRejection } from '../../identity/model.ts';
import type { SourceDelta } from '../../sources/changes.ts';

function mergeSide<T extends { externalId: string }>(
  older: { upserted: T[]; removed: string[] },
  newer: { upserted: T[]; removed: string[] },
): { upserted: T[]; removed: string[] } {
  const state = new Map<string, T | null>();
  for (const u of older.upserted) state.set(u.externalId, u);
  for (const id of older.removed) state.set(id, null);
  for (const u of newer.upserted) state.set(u.externalId, u);
  for (const id of newer.removed) state.set(id, null);
  const upserted: T[] = [];
  const removed: string[] = [];
  for (const [id, v] of state) if (v === null) removed.push(id);
  else upserted.push(v);
  return { upserted, removed };
}

const rejectionKey = (r: SourceRejection): string => `${r.kind}|${r.externalId ?? ''}|${r.member ?? ''}|${r.ref}`;

/** One delta equivalent to `older` followed by `newer`; the cursor is `newer`'s. */
export function mergeDeltas(older: SourceDelta, newer: SourceDelta): SourceDelta {
  const rejected = new Map<string, SourceRejection>();
  for (const r of [...older.rejected, ...newer.rejected]) rejected.set(rejectionKey(r), r);
  return {
    kind: 'delta',
    cursor: newer.cursor,
    users: mergeSide<NormalizedUser>(older.users, newer.users),
    groups: mergeSide<NormalizedGroup>(older.groups, newer.groups),
    rejected: [...rejected.values()],
    // The earliest change time of an identity: propagation is timed from its first change.
    changedAt: { ...newer.changedAt, ...older.changedAt },
  };
}
