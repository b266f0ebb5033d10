/**
 * The desired state the change path keeps: the last full read with every delta since applied
 * to it. A delta's records are complete, so applying one is replacing (or dropping) whole
 * records; a rejected entry replaces the valid record of the identity it names.
 */
import type { DesiredState } from '../../identity/model.ts';
import type { SourceDelta } from '../../sources/changes.ts';

export function applyDeltaToDesired(state: DesiredState, d: SourceDelta): DesiredState {
  const users = new Map(state.users.map((u) => [u.externalId, u]));
  const groups = new Map(state.groups.map((g) => [g.externalId, g]));
  for (const id of d.users.removed) users.delete(id);
  for (const u of d.users.upserted) users.set(u.externalId, u);
  for (const id of d.groups.removed) groups.delete(id);
  for (const g of d.groups.upserted) groups.set(g.externalId, g);
  // An identity named again (valid, removed, or rejected anew) is no longer rejected as before.
  const named = new Set([...d.users.upserted, ...d.groups.upserted].map((o) => o.externalId));
  for (const id of [...d.users.removed, ...d.groups.removed]) named.add(id);
  for (const r of d.rejected) {
    if (r.externalId === undefined || r.member !== undefined) continue;
    named.add(r.externalId);
    if (r.kind === 'group') groups.delete(r.externalId);
    else users.delete(r.externalId);
  }
  const rejected = [...state.rejected.filter((r) => r.externalId === undefined || !named.has(r.externalId)), ...d.rejected];
  return { users: [...users.values()], groups: [...groups.values()], rejected, stats: state.stats };
}
