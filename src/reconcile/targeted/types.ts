/**
 * The targeted reconcile: a change to a few identities, planned with exactly the rules of a
 * full plan but over the neighbourhood those identities reach, from a fresh read of the
 * affected platform objects. When it cannot decide locally it defers to a full reconcile;
 * it never writes what a full reconcile would not.
 */
import type { ProvisioningConfig } from '../../config/schema.ts';
import type { DesiredState } from '../../identity/model.ts';
import type { Ledger } from '../ledger.ts';
import type { Plan } from '../plan-types.ts';
import type { ScimTarget } from '../target.ts';
import type { UserAttributeTarget } from '../../platform/user-attributes.ts';

export interface TargetedInput {
  tenant: string;
  source: string;
  config: ProvisioningConfig;
  target: ScimTarget;
  attributes?: UserAttributeTarget | undefined;
  ledger: Ledger;
  /** The complete desired state, with the changes already applied to it. */
  desired: DesiredState;
  /** What changed, by source externalId. Removed ones are simply absent from `desired`. */
  affected: { users: readonly string[]; groups: readonly string[] };
  /** Managed platform objects at the last full reconcile: the base of the guard's percentages. */
  managedAtLastFull: number;
  allowDeletes: boolean;
  now: number;
  signal?: AbortSignal | undefined;
}

/** Why a change could not be decided locally; each is a stable code in logs and metrics. */
export type DeferReason =
  | 'name-held' // a userName or displayName is held by another platform object
  | 'ambiguous-match' // more than one platform object could be this identity
  | 'group-too-large' // a group whose members cannot be read or compared within bounds
  | 'unknown-member' // a member with no platform object known to the ledger or a filter
  | 'unidentified-rejection' // a rejected entry without identity could be anyone
  | 'outside-neighbourhood' // the plan would touch an object outside the change's neighbourhood
  | 'platform-unreadable'; // an affected object could not be read (after retries)

export type TargetedOutcome =
  | {
      kind: 'plan';
      plan: Plan;
      /** Platform requests spent on reading the neighbourhood (GET and filtered lists). */
      reads: number;
    }
  | { kind: 'defer'; reason: DeferReason; detail: string; reads: number };
