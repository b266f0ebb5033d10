/**
 * The accidental-deletion guard (like Entra's threshold): a plan whose deactivations +
 * deletions exceed an absolute or relative limit, or that comes from an empty source while
 * we manage objects, holds every destructive operation unless the operator overrides it.
 */
import type { GuardVerdict } from './plan-types.ts';

export interface GuardInput {
  destructive: number;
  managed: number;
  sourceEmpty: boolean;
  limits: { maxDeletes: number; maxDeletePercent: number };
  allowDeletes: boolean;
}

export function evaluateGuard(input: GuardInput): GuardVerdict {
  const reasons: string[] = [];
  const { destructive, managed, limits } = input;
  if (input.sourceEmpty && managed > 0) {
    reasons.push(`the source returned no users while ${managed} objects are managed`);
  }
  if (destructive > limits.maxDeletes) {
    reasons.push(`${destructive} deactivations/deletions exceed guards.maxDeletes (${limits.maxDeletes})`);
  }
  if (managed > 0 && destructive > 0) {
    const pct = (destructive / managed) * 100;
    if (pct > limits.maxDeletePercent) {
      reasons.push(`${destructive} of ${managed} managed objects (${pct.toFixed(1)}%) exceed guards.maxDeletePercent (${limits.maxDeletePercent}%)`);
    }
  }
  const exceeded = reasons.length > 0;
  return {
    tripped: exceeded && !input.allowDeletes,
    reasons,
    destructive,
    managed,
    maxDeletes: limits.maxDeletes,
    maxDeletePercent: limits.maxDeletePercent,
    overridden: exceeded && input.allowDeletes,
  };
}
