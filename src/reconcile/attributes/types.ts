/**
 * The `attributes` section of a plan (schemaVersion 2) and the apply tasks that carry it out.
 * Both are plain JSON: the plan is printed by `plan --json`, the tasks are stored in Redis by
 * the daemon's fanned-out apply.
 */
import type { AttributeValue, NewAttributeDefinition, UserAttributeType } from '../../platform/user-attributes.ts';

export interface AttributeValueChange {
  attribute: string;
  before: AttributeValue | null;
  after: AttributeValue | null;
  /** The change takes a value away (clear, or an access-relevant value replaced): guarded. */
  takesAway: boolean;
}

export interface UserAttributeUpdate {
  /** Platform user id; null for a user this run creates. */
  id: string | null;
  externalId: string;
  userName: string;
  changes: AttributeValueChange[];
}

export interface AttributeMover {
  id: string;
  externalId: string;
  userName: string;
  changes: Array<{ attribute: string; before: AttributeValue | null; after: AttributeValue | null }>;
}

export interface AttributePlan {
  /** Configured attributes and where each stands on the platform. */
  definitions: {
    /** Configured attributes whose definition exists with the configured type (values synced). */
    existing: Array<{ name: string; id: string; type: string; createdByTool: boolean }>;
    create: Array<{ name: string; type: UserAttributeType; description?: string }>;
    /** Description changes of definitions this tool created (never of anyone else's). */
    update: Array<{ id: string; name: string; type: UserAttributeType; before: string | null; after: string | null }>;
  };
  users: UserAttributeUpdate[];
  /** Users whose access-relevant attribute changes from one value to another. */
  movers: AttributeMover[];
  /** Source values that do not fit the attribute's type: not written, the platform keeps its value. */
  rejected: Array<{ externalId: string; userName: string; attribute: string; reason: string }>;
  /** Users whose attributes are not synced this run (values could not be read), with the reason. */
  skipped: Array<{ externalId: string; userName: string; reason: string }>;
  /** Problems that stop an attribute (wrong-type definition) or the whole sync (API refused). */
  errors: Array<{ attribute: string | null; reason: string }>;
  reads: { platform: number; fromLedger: number; newUsers: number };
  summary: {
    definitionsCreate: number;
    definitionsUpdate: number;
    usersChanged: number;
    valuesSet: number;
    valuesClear: number;
    takeAways: number;
    movers: number;
    rejected: number;
    skipped: number;
    errors: number;
  };
}

/** Guard figures added to the plan's verdict (plan-types GuardVerdict stays as it was). */
export interface AttributeGuardFigures {
  /** Values taken away (clears and access-relevant replacements). */
  attributeClears: number;
  /** Users losing at least one value (the percentage limit counts these). */
  attributeClearUsers: number;
  /** Users whose attributes are synced this run. */
  attributeUsers: number;
  maxAttributeClears: number;
  maxAttributeClearPercent: number;
}

export interface AttributeUpsert {
  attribute: string;
  /** Known at plan time for existing definitions; otherwise read from the ledger (created earlier in the run). */
  attributeId: string | undefined;
  value: AttributeValue | null;
}

export type AttributeTask =
  | { action: 'attribute.create'; externalId: string; name: string; definition: NewAttributeDefinition }
  | { action: 'attribute.update'; id: string; externalId: string; name: string; definition: NewAttributeDefinition }
  | {
      action: 'user.attributes';
      /** Undefined for a user created in this run (looked up in the ledger by externalId). */
      id: string | undefined;
      externalId: string;
      name: string;
      upserts: AttributeUpsert[];
      /** The planned values before this task, for attributes the ledger does not know yet. */
      known: Record<string, AttributeValue | null>;
      /** Attributes synced this run: a user created in this run has none of them set. */
      synced: string[];
      /** The user plan adopts this account in this run: write only once the ledger records it. */
      requireManaged: boolean;
    };
