/**
 * A plan as a set of writes, one key per object and per member added or removed, so two
 * plans can be compared operation by operation ("every write of the targeted plan is a write
 * of the full plan").
 */
import type { Plan } from '../../../src/reconcile/plan-types.ts';

export interface PlanOp {
  key: string;
  /** Source externalIds the write is about (the object's, and the member's for memberships). */
  users: string[];
  groups: string[];
}

const ref = (id: string | null | undefined, ext: string | undefined): string => (id ? id : `new:${ext ?? '?'}`);

export function planOps(plan: Plan): PlanOp[] {
  const out: PlanOp[] = [];
  const user = (key: string, ext: string): void => void out.push({ key, users: [ext], groups: [] });
  for (const c of plan.users.create) user(`user.create ${c.externalId} ${JSON.stringify(c.resource)}`, c.externalId);
  for (const u of plan.users.update)
    user(`user.update ${u.id} ${u.externalId} ${JSON.stringify(u.ops)} ${u.renameVia ?? ''}`, u.externalId);
  for (const u of plan.users.reactivate)
    user(`user.reactivate ${u.id} ${u.externalId} ${JSON.stringify(u.ops)} ${u.renameVia ?? ''}`, u.externalId);
  for (const u of plan.users.deactivate) user(`user.deactivate ${u.id} ${u.reason}`, u.externalId);
  for (const u of plan.users.delete) user(`user.delete ${u.id} ${u.reason} ${u.freesName === true}`, u.externalId);
  const group = (key: string, ext: string): void => void out.push({ key, users: [], groups: [ext] });
  for (const c of plan.groups.create) group(`group.create ${c.externalId} ${JSON.stringify(c.resource)}`, c.externalId);
  for (const g of plan.groups.update)
    group(`group.update ${g.id} ${g.externalId} ${JSON.stringify(g.ops)} ${g.renameVia ?? ''}`, g.externalId);
  for (const g of plan.groups.delete) group(`group.delete ${g.id} ${g.freesName === true}`, g.externalId);
  for (const m of plan.memberships) {
    const g = ref(m.group.id, m.group.externalId);
    for (const a of m.add)
      out.push({
        key: `member.add ${g} ${ref(a.id, a.externalId)}`,
        users: a.externalId ? [a.externalId] : [],
        groups: [m.group.externalId],
      });
    for (const r of m.remove)
      out.push({
        key: `member.remove ${g} ${ref(r.id, r.externalId)}`,
        users: r.externalId ? [r.externalId] : [],
        groups: [m.group.externalId],
      });
  }
  for (const a of plan.attributes?.users ?? [])
    for (const c of a.changes) user(`attribute ${ref(a.id, a.externalId)} ${c.attribute} ${JSON.stringify(c.after)}`, a.externalId);
  return out;
}

/** Writes of `part` that `whole` does not plan. */
export function notIn(part: Plan, whole: Plan): string[] {
  const keys = new Set(planOps(whole).map((o) => o.key));
  return planOps(part)
    .map((o) => o.key)
    .filter((k) => !keys.has(k));
}
