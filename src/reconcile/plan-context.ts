/** What the planner's parts share: the input, ownership rules and the lists they report into. */
import type { ProvisioningConfig } from '../config/schema.ts';
import type { DesiredState, SourceRejection } from '../identity/model.ts';
import type { ScimGroup, ScimUser } from '../platform/scim/types.ts';
import type { Ledger, ObjectKind } from './ledger.ts';
import type { AttributeChange, DeleteApproval, IdentityConflict, PlanWarning, ProtectedObject, Skipped } from './plan-types.ts';
import type { PatchOperation } from '../platform/scim/types.ts';

export interface PlanInput {
  tenant: string;
  source: string;
  desired: DesiredState;
  platformUsers: ScimUser[];
  platformGroups: ScimGroup[];
  ledger: Ledger;
  config: ProvisioningConfig;
  allowDeletes: boolean;
  /** An operator's approval bound to a held plan (`approve-deletes`). */
  approval?: DeleteApproval | undefined;
  /** Notes from reading the platform (e.g. objects the listing skipped). */
  warnings?: PlanWarning[];
  now: number;
  /**
   * The whole tenant's figures for the guard, when the plan covers only part of it (a targeted
   * reconcile's neighbourhood): the percentages are taken against these, and "the source is
   * empty" / "no group has a member" are facts about the whole source. Absent: counted from
   * this input, as a full reconcile does.
   */
  guardBase?: GuardBase | undefined;
}

export interface GuardBase {
  /** Managed platform objects at the last full reconcile. */
  managed: number;
  /** Members of the managed groups at the last full reconcile; absent: the compared groups' members. */
  members?: number | undefined;
  /** Valid users in the whole desired state. */
  sourceUsers: number;
  /** Every in-scope group of the whole desired state lists no member. */
  sourceMembersEmpty: boolean;
}

export interface PlanContext {
  input: PlanInput;
  config: ProvisioningConfig;
  ledger: Ledger;
  skipped: Skipped[];
  protected: ProtectedObject[];
  warnings: PlanWarning[];
  conflicts: IdentityConflict[];
}

/**
 * Managed: recorded in the ledger, or (ownership.mode externalId) carrying an externalId, or
 * carrying the externalId of a create that was sent but not confirmed (crash after POST).
 */
export function isManaged(
  ctx: PlanContext,
  kind: ObjectKind,
  obj: { id: string; externalId?: string | undefined },
  desiredExternalId?: string,
): boolean {
  const { ledger, config } = ctx;
  return (
    ledger.has(kind, obj.id) ||
    (config.ownership.mode === 'externalId' && typeof obj.externalId === 'string' && obj.externalId !== '') ||
    (desiredExternalId !== undefined && obj.externalId === desiredExternalId && ledger.isPending(kind, desiredExternalId))
  );
}

/** Matched only through a pending create: plan it as an adoption so apply records it. */
export function isAdopting(
  ctx: PlanContext,
  kind: ObjectKind,
  obj: { id: string; externalId?: string | undefined },
  desiredExternalId: string,
  managed: boolean,
): boolean {
  return (
    !managed || (!ctx.ledger.has(kind, obj.id) && obj.externalId === desiredExternalId && ctx.ledger.isPending(kind, desiredExternalId))
  );
}

/** Leaves out the change (and its op) of one attribute path. */
export function withoutPath(
  changes: AttributeChange[],
  ops: PatchOperation[],
  path: string,
): { changes: AttributeChange[]; ops: PatchOperation[] } {
  return { changes: changes.filter((c) => c.path !== path), ops: ops.filter((o) => o.path !== path) };
}

/** Rejections that name a user (or CSV row) / a group; member-only rejections are handled apart. */
export function userRejections(rejected: SourceRejection[]): SourceRejection[] {
  return rejected.filter((r) => (r.kind === 'user' || r.kind === 'row') && r.member === undefined);
}

export function groupRejections(rejected: SourceRejection[]): SourceRejection[] {
  const out = rejected.filter((r) => r.kind === 'group' && r.member === undefined);
  // A rejected CSV row listed its groups: those stay (a group may exist only through that row).
  for (const r of rejected)
    for (const externalId of r.memberOf ?? []) out.push({ kind: 'group', ref: r.ref, reason: r.reason, externalId });
  return out;
}
