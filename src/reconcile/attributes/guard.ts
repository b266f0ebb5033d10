/**
 * The deletion guard, extended to user attributes: taking a value away (a clear, or an
 * access-relevant value replaced) is as consequential as a removal. Such changes have their
 * own limits (`guards.maxAttributeClears`, `guards.maxAttributeClearPercent` of the users whose
 * attributes are synced); exceeding them trips the same guard, which holds every destructive
 * operation of the run, attribute take-aways included, unless --allow-deletes overrides it.
 */
import type { DeleteApproval, GuardVerdict } from '../plan-types.ts';

export interface AttributeGuardInput {
  /** Values taken away. */
  clears: number;
  /** Users losing at least one value. */
  usersAffected: number;
  /** Users whose attributes are synced this run. */
  users: number;
  limits: { maxAttributeClears: number; maxAttributeClearPercent: number };
  allowDeletes: boolean;
  /** `approve-deletes`: releases the plan only when none of its counts exceeds what was held. */
  approval?: DeleteApproval | undefined;
}

export function mergeAttributeGuard(verdict: GuardVerdict, input: AttributeGuardInput): GuardVerdict {
  const { clears, usersAffected, users, limits } = input;
  const reasons: string[] = [];
  if (clears > limits.maxAttributeClears) {
    reasons.push(`${clears} user attribute values taken away exceed guards.maxAttributeClears (${limits.maxAttributeClears})`);
  }
  if (users > 0 && usersAffected > 0) {
    const pct = (usersAffected / users) * 100;
    if (pct > limits.maxAttributeClearPercent) {
      reasons.push(
        `${usersAffected} of ${users} synced users (${pct.toFixed(1)}%) lose a user attribute value, exceeding guards.maxAttributeClearPercent (${limits.maxAttributeClearPercent}%)`,
      );
    }
  }
  const exceeded = verdict.tripped || verdict.overridden || reasons.length > 0;
  const a = input.approval;
  const approved =
    a !== undefined &&
    verdict.destructive <= a.destructive &&
    verdict.memberRemovals <= a.memberRemovals &&
    clears <= (a.attributeClears ?? 0);
  if (exceeded && a !== undefined && !approved && !input.allowDeletes && clears > (a.attributeClears ?? 0)) {
    reasons.push(
      `the approval covers ${a.attributeClears ?? 0} user attribute values taken away; this plan has ${clears}: approve again after checking it`,
    );
  }
  const override = input.allowDeletes || approved;
  return {
    ...verdict,
    reasons: [...verdict.reasons, ...reasons],
    tripped: exceeded && !override,
    overridden: exceeded && override,
    attributes: {
      attributeClears: clears,
      attributeClearUsers: usersAffected,
      attributeUsers: users,
      maxAttributeClears: limits.maxAttributeClears,
      maxAttributeClearPercent: limits.maxAttributeClearPercent,
    },
  };
}
