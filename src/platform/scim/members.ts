/**
 * Group membership deltas: PATCH bodies chunked to a per-request value budget, in the member
 * removal dialect the target accepts, and the equivalent full member list for PUT fallback.
 */
import { eqFilter, valuePath } from './filter.ts';
import type { PatchOperation, ScimMember } from './types.ts';

export type MemberRemoveDialect = 'filter' | 'value-array';

/**
 * The PATCH requests (each an operation list) for a membership delta. Each request carries at
 * most `maxPerRequest` member values in total; removals go first so a request never grows a
 * group beyond what the delta intends.
 */
export function memberPatchRequests(
  add: readonly string[],
  remove: readonly string[],
  dialect: MemberRemoveDialect,
  maxPerRequest: number,
): PatchOperation[][] {
  const max = Math.max(1, Math.floor(maxPerRequest));
  const removeIds = unique(remove);
  const removing = new Set(removeIds);
  const addIds = unique(add).filter((id) => !removing.has(id));
  const all = [...removeIds.map((id) => ({ id, add: false })), ...addIds.map((id) => ({ id, add: true }))];
  const requests: PatchOperation[][] = [];
  for (let i = 0; i < all.length; i += max) {
    const chunk = all.slice(i, i + max);
    const ops: PatchOperation[] = [];
    const removes = chunk.filter((c) => !c.add).map((c) => c.id);
    const adds = chunk.filter((c) => c.add).map((c) => c.id);
    if (removes.length > 0) {
      if (dialect === 'filter') {
        for (const id of removes) ops.push({ op: 'remove', path: valuePath('members', eqFilter('value', id)) });
      } else {
        ops.push({ op: 'remove', path: 'members', value: removes.map((value) => ({ value })) });
      }
    }
    if (adds.length > 0) ops.push({ op: 'add', path: 'members', value: adds.map((value) => ({ value })) });
    requests.push(ops);
  }
  return requests;
}

/** The member list after the delta, keeping the server's entries (display, $ref) of those that stay. */
export function applyMemberDelta(
  members: readonly ScimMember[] | undefined,
  add: readonly string[],
  remove: readonly string[],
): ScimMember[] {
  const removing = new Set(remove);
  const out = (members ?? []).filter((m) => !removing.has(m.value));
  const present = new Set(out.map((m) => m.value));
  for (const id of add) {
    if (removing.has(id) || present.has(id)) continue;
    present.add(id);
    out.push({ value: id });
  }
  return out;
}

function unique(ids: readonly string[]): string[] {
  return [...new Set(ids)];
}
