/**
 * A target that reads an object before writing it and skips the write when its effect is
 * already there. A task is run a second time when its first attempt's outcome was never
 * recorded (the completion mark was lost in a Redis failover, the worker died after the
 * request): the first attempt may well have reached the platform. Reading first keeps such a
 * repeat from writing the same change twice. Used for repeated attempts only: a first attempt
 * has nothing to find.
 *
 * - PATCH: skipped when applying its operations to the object as read changes nothing.
 * - member PATCH: skipped when every member to add is present and every one to remove absent.
 * - DELETE: skipped when the object is gone.
 * Creates are not wrapped: a repeated create meets the first one's object (409 → adopt).
 */
import { applyPatch } from '../platform/scim/patch-apply.ts';
import type { PatchOperation, ResourceType, ScimGroup, ScimResource, ScimUser } from '../platform/scim/types.ts';
import type { ScimTarget } from './target.ts';

export interface ReadBeforeWriteEvents {
  /** A write was skipped because the platform already shows its effect. */
  onSkipped?(write: 'patch' | 'members' | 'delete', type: ResourceType, id: string): void;
}

export function readBeforeWrite(target: ScimTarget, events: ReadBeforeWriteEvents = {}): ScimTarget {
  const skipped = (write: 'patch' | 'members' | 'delete', type: ResourceType, id: string): void => events.onSkipped?.(write, type, id);
  return {
    listUsers: (signal, opts) => target.listUsers(signal, opts),
    listGroups: (signal, opts) => target.listGroups(signal, opts),
    get: (type, id, signal) => target.get(type, id, signal),
    getUser: (id, signal) => target.getUser(id, signal),
    getGroup: (id, signal) => target.getGroup(id, signal),
    query: (type, filter, signal) => target.query(type, filter, signal),
    createUser: (body) => target.createUser(body),
    createGroup: (body) => target.createGroup(body),
    async patch(type, id, ops) {
      const current = await target.get<ScimUser | ScimGroup>(type, id);
      if (current !== undefined && patchHolds(current, ops)) return skipped('patch', type, id);
      return target.patch(type, id, ops);
    },
    async patchMembers(groupId, add, remove) {
      const group = await target.getGroup(groupId);
      if (group !== undefined) {
        const members = new Set((group.members ?? []).map((m) => m.value));
        if (add.every((id) => members.has(id)) && !remove.some((id) => members.has(id))) return skipped('members', 'Groups', groupId);
      }
      return target.patchMembers(groupId, add, remove);
    },
    async delete(type, id) {
      if ((await target.get(type, id)) === undefined) return skipped('delete', type, id);
      return target.delete(type, id);
    },
  };
}

/** Whether `ops` would leave `resource` as it is (their effect is already there). */
export function patchHolds(resource: ScimResource, ops: readonly PatchOperation[]): boolean {
  try {
    return canonical(applyPatch(resource, ops)) === canonical(resource);
  } catch {
    // An operation that cannot be applied locally: let the platform judge it.
    return false;
  }
}

/** JSON with object keys sorted, so key order never makes two equal objects differ. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}
