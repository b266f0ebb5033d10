/**
 * The plan: a complete, explainable diff between the desired state and the platform.
 * `plan --json` prints exactly this shape (schemaVersion 2, documented in docs/reconcile.md);
 * add fields only, never rename or remove them within a schema version.
 */
import type { SourceRejection } from '../identity/model.ts';
import type { NewResource, PatchOperation, ScimGroup, ScimUser } from '../platform/scim/types.ts';
import type { AttributeGuardFigures, AttributePlan } from './attributes/types.ts'; // [h17 user attributes]

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
}

export type RemovalReason = 'not-in-source' | 'out-of-scope' | 'disabled-in-source' | 'grace-period-expired';

export interface UserRemoval {
  id: string;
  externalId: string;
  userName: string;
  reason: RemovalReason;
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
}

export interface GroupDelete {
  id: string;
  externalId: string;
  displayName: string;
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
}

export interface GuardVerdict {
  tripped: boolean;
  reasons: string[];
  /** Deactivations + deletions (users) + group deletions this plan would perform. */
  destructive: number;
  managed: number;
  maxDeletes: number;
  maxDeletePercent: number;
  /** --allow-deletes was given: the guard is reported but not enforced. */
  overridden: boolean;
  /** [h17] Attribute values taken away, and the limits (present when user attributes are configured). */
  attributes?: AttributeGuardFigures;
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
  /** Number of write operations the plan implies (before chunking). */
  changes: number;
  /** [h17] User attribute definitions to create and users whose values change (included in `changes`). */
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
  guard: GuardVerdict;
  sourceStats: Record<string, number>;
  summary: PlanSummary;
  /** [h17] User attributes (present when provisioning.userAttributes is configured). */
  attributes?: AttributePlan;
}
