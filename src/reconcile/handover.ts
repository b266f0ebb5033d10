/**
 * A handover (an account given by name to a new owner, `matching.handOverLeaverAccountsByName`)
 * is one change: the account's new identity, reactivation, attribute values and memberships.
 * While the deletion guard holds the plan, it holds every handover whole — otherwise the
 * reactivation would run and the leaver's values and groups (the part held) would stay with
 * the new owner. Pure.
 */
import type { Plan, UserUpdate } from './plan-types.ts';
import type { ApplyTask, Phase } from './tasks.ts';

/** The plan's handovers (updates and reactivations that hand an account to a new owner). */
export function handovers(plan: Plan): UserUpdate[] {
  return [...plan.users.update, ...plan.users.reactivate].filter((u) => u.handoverFrom !== undefined);
}

/** The phases without any task (or member reference) touching a handover, when the guard holds the plan. */
export function withoutHeldHandovers(plan: Plan, phases: Phase[]): Phase[] {
  if (!plan.guard.tripped) return phases;
  const ids = new Set(handovers(plan).map((u) => u.id));
  if (ids.size === 0) return phases;
  const exts = new Set(handovers(plan).map((u) => u.externalId));
  const keep = (t: ApplyTask): ApplyTask | undefined => {
    switch (t.action) {
      case 'user.update':
      case 'user.adopt':
      case 'user.reactivate':
        return ids.has(t.id) ? undefined : t;
      case 'user.attributes':
        return (t.id !== undefined && ids.has(t.id)) || exts.has(t.externalId) ? undefined : t;
      case 'group.members': {
        const add = t.add.filter((m) => m.id === undefined || !ids.has(m.id));
        const remove = t.remove.filter((m) => m.id === undefined || !ids.has(m.id));
        return add.length + remove.length > 0 ? { ...t, add, remove } : undefined;
      }
      default:
        return t;
    }
  };
  return phases.map((p) => ({ ...p, tasks: p.tasks.map(keep).filter((t): t is ApplyTask => t !== undefined) }));
}
