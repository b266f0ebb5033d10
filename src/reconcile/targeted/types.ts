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
  /**
   * The complete desired state, with the changes already applied to it: the view of a
   * `DesiredCache` (`cache.state`, indexed as it changes); a plain state is indexed once, O(n).
   */
  desired: DesiredState;
  /**
   * What changed, by source externalId (what `applyDelta` returned, merged over the changes
   * coalesced into this run: `mergeAffected`). Removed ones are simply absent from `desired`.
   */
  affected: { users: readonly string[]; groups: readonly string[] };
  /** Managed platform objects at the last full reconcile: the base of the guard's percentages. */
  managedAtLastFull: number;
  /** Members of the managed groups at the last full reconcile: the base of the member-removal percentage. */
  membersAtLastFull?: number | undefined;
  /** A group with more members is not compared locally (defer `group-too-large`); default TARGETED_LIMITS.maxGroupMembers. */
  maxGroupMembers?: number | undefined;
  /** Identities (users + groups) one targeted plan may reach; default TARGETED_LIMITS.maxIdentities. */
  maxIdentities?: number | undefined;
  allowDeletes: boolean;
  now: number;
  signal?: AbortSignal | undefined;
}

/** The bounds of a targeted reconcile; past them it defers to a full reconcile. */
export const TARGETED_LIMITS = {
  /**
   * Members of one platform group compared locally (a GET of the group returns them all: an id,
   * a display name and perhaps a $ref each, 10–20 MB at this bound, within
   * scim.maxResponseMegabytes' default of 32). An all-staff group of a 100,000-person tenant
   * stays on the change path.
   */
  maxGroupMembers: 100_000,
  /** Users and groups in one neighbourhood (each costs one or two reads). */
  maxIdentities: 500,
} as const;

/** Platform reads of one targeted plan: for the changed users themselves, and for memberships (groups and their members). */
export interface TargetedReads {
  users: number;
  memberships: number;
}

/** Why a change could not be decided locally; each is a stable code in logs and metrics. */
export type DeferReason =
  | 'name-held' // a userName or displayName is held by another platform object
  | 'ambiguous-match' // more than one platform object could be this identity
  | 'group-too-large' // a group whose members cannot be read or compared within bounds
  | 'unknown-member' // a member with no platform object known to the ledger or a filter
  | 'unidentified-rejection' // a rejected entry without identity could be anyone
  | 'outside-neighbourhood' // the plan would touch an object outside the change's neighbourhood
  | 'platform-unreadable' // an affected object could not be read (after retries), or the server cannot filter
  | 'neighbourhood-too-large' // more identities than TARGETED_LIMITS.maxIdentities
  | 'guard'; // the plan trips the deletion guard: the full plan decides, and the operator approves that one

export type TargetedOutcome =
  | {
      kind: 'plan';
      /** A plan as a full reconcile makes it, over the neighbourhood; `rejected` lists the rejections of the identities it covers. */
      plan: Plan;
      /** Platform requests spent on reading the neighbourhood (GET and filtered lists). */
      reads: number;
      readsBy: TargetedReads;
      /** The identities planned (source externalIds), the affected ones and those they reach. */
      neighbourhood: { users: string[]; groups: string[] };
    }
  | { kind: 'defer'; reason: DeferReason; detail: string; reads: number };
