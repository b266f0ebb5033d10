/**
 * Desired state + platform snapshot + ledger → Plan. Pure: no I/O, no mutation of inputs.
 * The rules (docs/reconcile.md) live in the parts: global matching (match.ts), users
 * (plan-users.ts), groups (plan-groups.ts), memberships (plan-members.ts), renames
 * (renames.ts) and the guard (guard.ts). This module puts them together.
 */
import { isUnidentified } from '../identity/model.ts';
import { evaluateGuard } from './guard.ts';
import { userRejections, type PlanContext, type PlanInput } from './plan-context.ts';
import { planGroups } from './plan-groups.ts';
import { planMemberships } from './plan-members.ts';
import { nameWarnings } from './name-warnings.ts';
import { planUsers } from './plan-users.ts';
import { PLAN_SCHEMA_VERSION, type Plan, type PlanSummary } from './plan-types.ts';

export type { PlanInput } from './plan-context.ts';

export function buildPlan(input: PlanInput): Plan {
  const plan = planOnce(input, true);
  // A name freed by a delete the guard holds stays taken: plan again with the names held.
  const freesNames = plan.users.delete.some((d) => d.freesName) || plan.groups.delete.some((d) => d.freesName);
  return plan.guard.tripped && freesNames ? planOnce(input, false) : plan;
}

function planOnce(input: PlanInput, deletesFreeNames: boolean): Plan {
  const { config, desired } = input;
  const ctx: PlanContext = {
    input,
    config,
    ledger: input.ledger,
    skipped: [],
    protected: [],
    warnings: [...(input.warnings ?? [])],
    conflicts: [],
  };
  const users = planUsers(ctx, { deletesFreeNames });
  const groups = planGroups(ctx, { deletesFreeNames });
  const members = planMemberships(ctx, users, groups);
  ctx.warnings.push(...nameWarnings(users, groups));

  const base = input.guardBase;
  // A base is never smaller than what this input shows managed (a base of 0 would turn the percentage off).
  const counted =
    input.platformUsers.filter((u) => input.ledger.has('user', u.id) || (config.ownership.mode === 'externalId' && !!u.externalId)).length +
    input.platformGroups.filter((g) => input.ledger.has('group', g.id) || (config.ownership.mode === 'externalId' && !!g.externalId))
      .length;
  const managed = Math.max(base?.managed ?? 0, counted);
  const memberRemovals = members.memberships.reduce((n, m) => n + m.remove.length, 0);
  const inScopeGroups = groups.compared.map((c) => c.source);
  const guard = evaluateGuard({
    destructive: users.deactivate.length + users.delete.length + groups.delete.length,
    managed,
    memberRemovals,
    members: base?.members ?? members.members,
    sourceEmpty: (base?.sourceUsers ?? desired.users.length) === 0,
    sourceRejectedUsers: userRejections(desired.rejected).length,
    sourceMembersEmpty: base?.sourceMembersEmpty ?? (inScopeGroups.length > 0 && inScopeGroups.every((g) => g.members.length === 0)),
    unidentified: unidentifiedReasons(input, users.leavers.size, members.leaverRemovals, groups.delete.length),
    limits: config.guards,
    allowDeletes: input.allowDeletes,
    approval: input.approval,
  });

  const plan: Plan = {
    schemaVersion: PLAN_SCHEMA_VERSION,
    tenant: input.tenant,
    source: input.source,
    generatedAt: new Date(input.now).toISOString(),
    deprovisionAction: config.deprovision.action,
    users: { create: users.create, update: users.update, reactivate: users.reactivate, deactivate: users.deactivate, delete: users.delete },
    groups: { create: groups.create, update: groups.update, delete: groups.delete },
    memberships: members.memberships,
    skipped: ctx.skipped,
    rejected: desired.rejected,
    protected: ctx.protected,
    warnings: ctx.warnings,
    conflicts: ctx.conflicts,
    membership: config.membership,
    guard,
    sourceStats: {
      ...desired.stats,
      sourceUsers: desired.users.length,
      sourceGroups: desired.groups.length,
      inScopeUsers: users.inScope,
      inScopeGroups: groups.inScope,
    },
    summary: emptySummary(),
  };
  plan.summary = summarize(plan);
  return plan;
}

/**
 * A rejection without any identity could be anyone: while there is one, deprovisioning what
 * it could be (users not in the source, their member removals; groups not in the source) is
 * held by the guard, so an operator looks before anyone loses access.
 */
function unidentifiedReasons(input: PlanInput, userLeavers: number, leaverRemovals: number, groupDeletes: number): string[] {
  const blind = input.desired.rejected.filter((r) => isUnidentified(r));
  const users = blind.filter((r) => r.kind === 'user' || r.kind === 'row').length;
  const groups = blind.filter((r) => r.kind === 'group' || r.kind === 'row').length;
  const out: string[] = [];
  if (users > 0 && userLeavers + leaverRemovals > 0) {
    out.push(
      `${users} source user entries were rejected without a readable identity (see rejected); the ${userLeavers} deprovisionings and ${leaverRemovals} member removals of users absent from the source could be them`,
    );
  }
  if (groups > 0 && groupDeletes > 0) {
    out.push(
      `${groups} source group entries were rejected without a readable identity (see rejected); the ${groupDeletes} group deletions could be them`,
    );
  }
  return out;
}

function emptySummary(): PlanSummary {
  return {
    usersCreate: 0,
    usersUpdate: 0,
    usersReactivate: 0,
    usersDeactivate: 0,
    usersDelete: 0,
    groupsCreate: 0,
    groupsUpdate: 0,
    groupsDelete: 0,
    membersAdd: 0,
    membersRemove: 0,
    skipped: 0,
    rejected: 0,
    protected: 0,
    warnings: 0,
    changes: 0,
  };
}

export function summarize(plan: Plan): PlanSummary {
  const s: PlanSummary = {
    usersCreate: plan.users.create.length,
    usersUpdate: plan.users.update.length,
    usersReactivate: plan.users.reactivate.length,
    usersDeactivate: plan.users.deactivate.length,
    usersDelete: plan.users.delete.length,
    groupsCreate: plan.groups.create.length,
    groupsUpdate: plan.groups.update.length,
    groupsDelete: plan.groups.delete.length,
    membersAdd: plan.memberships.reduce((n, m) => n + m.add.length, 0),
    membersRemove: plan.memberships.reduce((n, m) => n + m.remove.length, 0),
    skipped: plan.skipped.length,
    rejected: plan.rejected.length,
    protected: plan.protected.length,
    warnings: plan.warnings.length,
    conflicts: plan.conflicts?.length ?? 0,
    changes: 0,
  };
  s.changes =
    s.usersCreate +
    s.usersUpdate +
    s.usersReactivate +
    s.usersDeactivate +
    s.usersDelete +
    s.groupsCreate +
    s.groupsUpdate +
    s.groupsDelete +
    s.membersAdd +
    s.membersRemove;
  return s;
}
