/**
 * The plan: a complete, explainable diff between the desired state and the platform.
 * `plan --json` prints exactly this shape (schemaVersion 2, documented in docs/reconcile.md);
 * add fields only, never rename or remove them within a schema version.
 */
import type { SourceRejection } from '../identity/model.ts';
import type { NewResource, PatchOperation, ScimGroup, ScimUser } from '../platform/scim/types.ts';
import type { AttributeGuardFigures, AttributePlan } from './attributes/types.ts';

/** 2: the `attributes` section, `guard.attribute*` and `summary.attribute*` (user attributes). */
export const PLAN_SCHEMA_VERSION = 2;

export interface AttributeChange {
  path: string;
  before: unknown;
  after: unknown;
}

export interface UserCreate {
  externalId: string;
  userName: string;
  resource: NewResource<ScimUser>;
}

export interface UserUpdate {
  id: string;
  externalId: string;
  userName: string;
  changes: AttributeChange[];
  ops: PatchOperation[];
  /** Taking over an existing unmanaged object (matching.adoptExisting). */
  adopt: boolean;
  /**
   * Added field: the userName is first set to this temporary value (apply phase `renames`)
   * because the new name is held by another account that is renaming away in the same plan
   * (a swap or a cycle), so every rename lands in one run without a 409.
   */
  renameVia?: string;
  /**
   * Added field: the account belonged to this externalId, a person absent from the source, and
   * is handed over by name (`matching.handOverLeaverAccountsByName`). The handover clears what
   * the account held that the source does not give its new owner (memberships, attribute
   * values), and runs whole or not at all: while the guard holds any of it, none of it runs.
   */
  handoverFrom?: string;
}

export type RemovalReason = 'not-in-source' | 'out-of-scope' | 'disabled-in-source' | 'grace-period-expired';

export interface UserRemoval {
  id: string;
  externalId: string;
  userName: string;
  reason: RemovalReason;
  /**
   * Added field, on a delete: a rename or create of this run takes this userName, so the delete
   * runs first (apply phase `name-deletes`). Only in plans whose deletes the guard lets run.
   */
  freesName?: true;
}

export interface GroupCreate {
  externalId: string;
  displayName: string;
  resource: NewResource<ScimGroup>;
}

export interface GroupUpdate {
  id: string;
  externalId: string;
  displayName: string;
  changes: AttributeChange[];
  ops: PatchOperation[];
  adopt: boolean;
  /** Added field: temporary displayName set first (see UserUpdate.renameVia). */
  renameVia?: string;
}

export interface GroupDelete {
  id: string;
  externalId: string;
  displayName: string;
  /**
   * Added field: a rename or create of this plan takes this group's displayName, so the delete
   * runs first (apply phase `name-deletes`). Only in plans whose deletes the guard lets run.
   */
  freesName?: true;
}

/** A user as a membership refers to it: by platform id when it exists, else by externalId (created in this run). */
export interface MemberRef {
  externalId: string | undefined;
  userName: string | undefined;
  id: string | undefined;
}

export interface MembershipChange {
  group: { id: string | undefined; externalId: string; displayName: string };
  add: MemberRef[];
  remove: MemberRef[];
}

export interface Skipped {
  kind: 'user' | 'group' | 'member';
  ref: string;
  reason: string;
  /** `unmanaged`: matches a platform object this tool does not manage (ownership ledger). */
  code?: 'unmanaged';
}

export interface GuardVerdict {
  tripped: boolean;
  reasons: string[];
  /** Deactivations + deletions (users) + group deletions this plan would perform. */
  destructive: number;
  /** Managed users + groups in the platform listing, under the configured ownership mode. */
  managed: number;
  maxDeletes: number;
  maxDeletePercent: number;
  /** Added field: group member removals this plan would perform. */
  memberRemovals: number;
  /** Added field: members of the managed groups the plan compares (the percentage's base). */
  members: number;
  maxMemberRemovals: number;
  maxMemberRemovalPercent: number;
  /** --allow-deletes was given, or an approval covers this plan: the guard is reported but not enforced. */
  overridden: boolean;
  /** Attribute values taken away, and the limits (present when user attributes are configured). */
  attributes?: AttributeGuardFigures;
  /** Added field: the approval (`approve-deletes`) this plan was checked against, if any. */
  approval?: DeleteApproval;
}

/**
 * An operator's approval of a held plan, bound to what was held: it releases a later plan
 * only when that plan removes no more than this (a larger plan trips the guard again).
 */
export interface DeleteApproval {
  destructive: number;
  memberRemovals: number;
  /** User-attribute values taken away that were held (absent: none approved). */
  attributeClears?: number;
}

/** Added field: a platform object kept because a source entry naming it was rejected. */
export interface ProtectedObject {
  kind: 'user' | 'group' | 'member';
  /** Platform id (for `member`: the user's id). */
  id: string;
  /** userName, displayName, or `group ← userName` for a member. */
  name: string;
  externalId: string | undefined;
  /** The rejection's ref (where the source entry is). */
  rejection: string;
  /** What was not done. */
  held: string;
}

/**
 * Added field: an identity conflict. The source gives a person a userName that an account of
 * someone else holds — a person absent from the source (a leaver) whose account is kept, or an
 * account whose externalId is another person's. The account is never handed over implicitly:
 * the create (or rename) waits, and the ways out are listed.
 */
export interface IdentityConflict {
  kind: 'user';
  /** What the newcomer wanted: its account created, or its account renamed to the held name. */
  wants: 'create' | 'rename';
  /** The held userName (as the source spells it). */
  name: string;
  /** The source person who wants the name. */
  externalId: string;
  /** The account holding it and the person it belongs to. */
  account: { id: string; userName: string; owner: string; active: boolean };
  reason: string;
  /** Explicit, audited ways out, for the operator. */
  waysOut: string[];
}

/** Added field: something the operator should know that is neither a change nor a rejection. */
export interface PlanWarning {
  code: 'listing-incomplete' | 'removal-not-converging' | 'unidentified-rejections' | 'confusable-name';
  ref: string;
  message: string;
}

export interface PlanSummary {
  usersCreate: number;
  usersUpdate: number;
  usersReactivate: number;
  usersDeactivate: number;
  usersDelete: number;
  groupsCreate: number;
  groupsUpdate: number;
  groupsDelete: number;
  membersAdd: number;
  membersRemove: number;
  skipped: number;
  rejected: number;
  /** Added fields: entries of `protected` and `warnings`. */
  protected: number;
  warnings: number;
  /** Added field: entries of `conflicts`. */
  conflicts?: number;
  /** Number of write operations the plan implies (before chunking). */
  changes: number;
  /** User attribute definitions to create and users whose values change (included in `changes`). */
  attributeDefinitions?: number;
  attributeUsers?: number;
}

export interface Plan {
  schemaVersion: typeof PLAN_SCHEMA_VERSION;
  tenant: string;
  source: string;
  generatedAt: string;
  deprovisionAction: 'deactivate' | 'delete' | 'none';
  users: {
    create: UserCreate[];
    update: UserUpdate[];
    reactivate: UserUpdate[];
    deactivate: UserRemoval[];
    delete: UserRemoval[];
  };
  groups: {
    create: GroupCreate[];
    update: GroupUpdate[];
    delete: GroupDelete[];
  };
  memberships: MembershipChange[];
  skipped: Skipped[];
  rejected: SourceRejection[];
  /** Added field: platform objects not deprovisioned/removed because their source entry was rejected. */
  protected: ProtectedObject[];
  /** Added field. */
  warnings: PlanWarning[];
  /** Added field: identity conflicts (a newcomer given a name someone else's account holds). Absent in older plan files. */
  conflicts?: IdentityConflict[];
  /** Added field: provisioning.membership. */
  membership: 'authoritative' | 'additive';
  guard: GuardVerdict;
  sourceStats: Record<string, number>;
  summary: PlanSummary;
  /** Set when the plan was restricted to one user (`--only`, reconcile/selection.ts). */
  only?: string;
  /** User attributes (present when provisioning.userAttributes is configured). */
  attributes?: AttributePlan;
}
