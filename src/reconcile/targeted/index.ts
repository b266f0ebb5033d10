/** The targeted reconcile (docs/reconcile.md, "Targeted reconcile"), as one import for the daemon. */
export { planTargeted } from './plan.ts';
export { applyDelta, DesiredCache, desiredLookup, mergeAffected, type AffectedSet, type DesiredLookup } from './desired-cache.ts';
export {
  TARGETED_LIMITS,
  type DeferReason,
  type TargetedInput,
  type TargetedOutcome,
  type TargetedReads,
} from './types.ts';
