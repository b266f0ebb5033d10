/**
 * The deletion guard, extended to user attributes: taking a value away (a clear, or an
 * access-relevant value replaced) is as consequential as a removal. Such changes have their
 * own limits (`guards.maxAttributeClears`, `guards.maxAttributeClearPercent` of the users whose
 * attributes are synced); exceeding them trips the same guard, which holds every destructive
 * operation of the run, attribute take-aways included, unless --allow-deletes overrides it.
 */
import type { GuardVerdict } from '../plan-types.ts';

export interface AttributeGuardInput {
  clears: number;
  users: number;
  limits: { maxAttributeClears: number; maxAttributeClearPercent: number };
  allowDeletes: boolean;
}

export function mergeAttributeGuard(verdict: GuardVerdict, input: AttributeGuardInput): GuardVerdict {
  const { clears, users, limits } = input;
  const reasons: string[] = [];
  if (clears > limits.maxAttributeClears) {
    reasons.push(`${clears} user attribute values taken away exceed guards.maxAttributeClears (${limits.maxAttributeClears})`);
  }
  if (users > 0 && clears > 0) {
    const pct = (clears / users) * 100;
    if (pct > limits.maxAttributeClearPercent) {
      reasons.push(`${clears} attribute values taken away for ${users} synced users (${pct.toFixed(1)}%) exceed guards.maxAttributeClearPercent (${limits.maxAttributeClearPercent}%)`);
    }
  }
  const exceeded = verdict.tripped || verdict.overridden || reasons.length > 0;
  return {
    ...verdict,
    reasons: [...verdict.reasons, ...reasons],
    tripped: exceeded && !input.allowDeletes,
    overridden: exceeded && input.allowDeletes,
    attributes: { attributeClears: clears, attributeUsers: users, maxAttributeClears: limits.maxAttributeClears, maxAttributeClearPercent: limits.maxAttributeClearPercent },
  };
}
