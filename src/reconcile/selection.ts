/**
 * Provision on demand (`plan|apply --only <userName|externalId>`), as Entra's "provision on
 * demand": the full plan is computed as usual (so matching, ownership and claims see the whole
 * directory), then restricted to one user and that user's memberships. Nobody else is created,
 * changed or deprovisioned, groups themselves are left alone, and the deletion guard is
 * evaluated on what the restricted plan would remove (one user at most), so a selection can
 * never look like, or be, a mass deletion.
 */
import { restrictAttributePlan } from './attributes/selection.ts';
import { evaluateGuard } from './guard.ts';
import { userRejections } from './plan-context.ts';
import type { MemberRef, MembershipChange, Plan, Skipped } from './plan-types.ts';
import { summarize } from './planner.ts';

export interface Selection {
  /** A userName (case-insensitive) or an externalId (exact). */
  only: string;
}

export interface RestrictedPlan {
  plan: Plan;
  /** Whether anything in the plan (a change or a skip) names the selected user. */
  matched: boolean;
}

export function selects(sel: Selection, ref: { userName?: string | undefined; externalId?: string | undefined }): boolean {
  return ref.externalId === sel.only || (ref.userName !== undefined && ref.userName.toLowerCase() === sel.only.toLowerCase());
}

/** `allowDeletes`: --allow-deletes was given for this run. */
export function restrictPlan(full: Plan, sel: Selection, allowDeletes: boolean): RestrictedPlan {
  const pick = <T extends { userName?: string | undefined; externalId?: string | undefined }>(list: T[]): T[] =>
    list.filter((x) => selects(sel, x));
  const skipped: Skipped[] = full.skipped.filter((k) => k.kind === 'user' && k.ref.toLowerCase() === sel.only.toLowerCase());
  const memberships: MembershipChange[] = [];
  for (const m of full.memberships) {
    const add = m.add.filter((r: MemberRef) => selects(sel, r));
    const remove = m.remove.filter((r: MemberRef) => selects(sel, r));
    if (add.length + remove.length === 0) continue;
    if (m.group.id === undefined) {
      // The group itself is not created on demand: only a full apply creates groups.
      skipped.push({
        kind: 'member',
        ref: `${m.group.displayName} ← ${sel.only}`,
        reason: 'the group does not exist on the platform yet; a full apply creates it with its members',
      });
      continue;
    }
    memberships.push({ group: m.group, add, remove });
  }
  const users = {
    create: pick(full.users.create),
    update: pick(full.users.update),
    reactivate: pick(full.users.reactivate),
    deactivate: pick(full.users.deactivate),
    delete: pick(full.users.delete),
  };
  const destructive = users.deactivate.length + users.delete.length;
  const plan: Plan = {
    ...full,
    users,
    groups: { create: [], update: [], delete: [] },
    memberships,
    skipped,
    rejected: full.rejected.filter((r) => r.kind === 'user' && r.ref.toLowerCase().includes(sel.only.toLowerCase())),
    // One removal is never a percentage problem; maxDeletes (even 0) and an empty source still hold it.
    guard: {
      ...evaluateGuard({
        destructive,
        managed: full.guard.managed,
        memberRemovals: memberships.reduce((n, m) => n + m.remove.length, 0),
        members: full.guard.members,
        sourceEmpty: (full.sourceStats['sourceUsers'] ?? 1) === 0,
        sourceRejectedUsers: userRejections(full.rejected).length,
        sourceMembersEmpty: false,
        unidentified: [],
        limits: {
          maxDeletes: full.guard.maxDeletes,
          maxDeletePercent: 100,
          maxMemberRemovals: full.guard.maxMemberRemovals,
          maxMemberRemovalPercent: 100,
        },
        allowDeletes,
      }),
      maxDeletePercent: full.guard.maxDeletePercent,
      maxMemberRemovalPercent: full.guard.maxMemberRemovalPercent,
    },
    protected: full.protected.filter((p) => selects(sel, { userName: p.name, externalId: p.externalId })),
    conflicts: (full.conflicts ?? []).filter((k) => selects(sel, { userName: k.name, externalId: k.externalId })),
    only: sel.only,
  };
  plan.summary = summarize(plan);
  restrictAttributePlan(plan, full, (r) => selects(sel, r), allowDeletes); // the selected user's attribute values only
  const matched =
    Object.values(users).some((l) => l.length > 0) ||
    memberships.length > 0 ||
    skipped.length > 0 ||
    (plan.conflicts?.length ?? 0) > 0 ||
    (plan.attributes?.users.length ?? 0) > 0;
  return { plan, matched };
}
