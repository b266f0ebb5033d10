/**
 * One provisioning-log record: a change the engine made, failed to make, or held back
 * (deletion guard). Built from what the engine reports (`AppliedChange`) plus the task or
 * plan entry it came from (attribute changes, member lists). Holds only identity fields the
 * sync already sends to the platform; attributes that look like credentials are dropped.
 */
import type { AppliedChange, ApplyTask, ChangeAction } from '../reconcile/tasks.ts';
import type { AttributeChange, MemberRef, Plan } from '../reconcile/plan-types.ts';
import { attributeDetails, heldAttributeRecords } from './user-attributes.ts';
import { heldHandoverRecords } from './identity.ts';

export type RecordResult = 'ok' | 'failed' | 'held';

/**
 * Records that are not an applied task: `user.conflict` (held: a newcomer given the userName
 * of someone else's account, reconcile.md "Identity conflicts"), `user.reassign` (an operator
 * handed an account to another externalId with `ledger reassign`).
 */
export type IdentityAction = 'user.conflict' | 'user.reassign';

export interface ProvisioningRecord {
  /** Position in the log (`<ms>-<seq>`, ordered); assigned by the store. */
  id: string;
  /** ISO 8601. */
  time: string;
  tenant: string;
  runId: string;
  action: ChangeAction | IdentityAction;
  result: RecordResult;
  /** `attribute`: a user-attribute definition (name in `externalId` and `name`). */
  object: { type: 'user' | 'group' | 'attribute'; externalId?: string; name?: string; id?: string };
  /** Attribute changes before → after (`before` is null on a create). */
  changes?: AttributeChange[];
  /** Group membership changes by member userName (or externalId); lists capped at MAX_MEMBERS_LISTED. */
  members?: { added: string[]; removed: string[]; addedCount: number; removedCount: number };
  /** Why a removal was planned, or why it was held. */
  reason?: string;
  error?: { code: string; message: string };
}

/** A record before the store gives it an id. */
export type NewRecord = Omit<ProvisioningRecord, 'id'>;

/** Member names kept per record; counts are always complete. */
export const MAX_MEMBERS_LISTED = 1000;

/** Attribute paths never logged, whatever a mapping sends. */
const SECRET_PATH = /pass(word)?|secret|token|credential|private.?key/i;

export function withoutSecrets(changes: AttributeChange[]): AttributeChange[] {
  return changes.filter((c) => !SECRET_PATH.test(c.path));
}

/** What the log knows about a task beyond the engine's report: the plan's before values, member names, the removal reason. */
export interface TaskDetail {
  changes?: AttributeChange[];
  reason?: string;
}

const memberName = (m: MemberRef): string => m.userName ?? m.externalId ?? m.id ?? '?';

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The attributes of a create as `before: null → after` changes, with the plan's path style:
 * complex attributes one level down (`name.givenName`), extension URNs as `urn:…:department`.
 */
function createChanges(resource: Record<string, unknown>): AttributeChange[] {
  const out: AttributeChange[] = [];
  for (const [k, v] of Object.entries(resource)) {
    if (k === 'schemas' || k === 'members') continue;
    if (isPlainObject(v))
      for (const [sub, after] of Object.entries(v)) out.push({ path: `${k}${k.includes(':') ? ':' : '.'}${sub}`, before: null, after });
    else out.push({ path: k, before: null, after: v });
  }
  return out;
}

/** The record of one applied or failed task (`task` is what the daemon's chunk or the in-process plan index holds). */
export function recordOf(
  tenant: string,
  runId: string,
  change: AppliedChange,
  task: ApplyTask | undefined,
  detail: TaskDetail | undefined,
  now: number,
): NewRecord {
  const type = change.action.startsWith('group.') ? 'group' : change.action.startsWith('attribute.') ? 'attribute' : 'user';
  const id = change.id ?? (task && 'id' in task ? task.id : undefined);
  const rec: NewRecord = {
    time: new Date(now).toISOString(),
    tenant,
    runId,
    action: change.action,
    result: change.result,
    object: {
      type,
      ...(change.externalId !== undefined ? { externalId: change.externalId } : {}),
      ...(change.name !== undefined ? { name: change.name } : {}),
      ...(id !== undefined ? { id } : {}),
    },
  };
  let changes = detail?.changes;
  if (changes === undefined && task !== undefined) {
    if (task.action === 'user.create' || task.action === 'group.create')
      changes = createChanges(task.resource as unknown as Record<string, unknown>);
    else if (task.action === 'user.deactivate') changes = [{ path: 'active', before: true, after: false }];
  }
  if (changes !== undefined && changes.length > 0) rec.changes = withoutSecrets(changes);
  if (task?.action === 'group.members') {
    rec.members = {
      added: task.add.slice(0, MAX_MEMBERS_LISTED).map(memberName),
      removed: task.remove.slice(0, MAX_MEMBERS_LISTED).map(memberName),
      addedCount: change.result === 'ok' ? (change.added ?? task.add.length) : task.add.length,
      removedCount: change.result === 'ok' ? (change.removed ?? task.remove.length) : task.remove.length,
    };
  }
  if (detail?.reason !== undefined) rec.reason = detail.reason;
  if (change.result === 'failed') rec.error = { code: change.code ?? 'E_UNEXPECTED', message: change.message ?? '' };
  return rec;
}

/** Key of a task in a plan index: the task's action and the object's externalId. */
export function taskKey(action: ChangeAction, externalId: string | undefined): string {
  return `${action}|${externalId ?? ''}`;
}

/**
 * Which planned actions an applied one may have come from: a create that met our own
 * object reports `*.adopt`.
 */
export function plannedActions(action: ChangeAction): ChangeAction[] {
  if (action === 'user.adopt') return ['user.adopt', 'user.create'];
  if (action === 'group.adopt') return ['group.adopt', 'group.create'];
  return [action];
}

/** Details of the plan's updates and removals (what the tasks alone do not carry), keyed by taskKey. */
export function planDetails(plan: Plan): Map<string, TaskDetail> {
  const out = new Map<string, TaskDetail>();
  for (const u of plan.users.update)
    if (u.changes.length > 0)
      out.set(taskKey(u.adopt && u.ops.length === 0 ? 'user.adopt' : 'user.update', u.externalId), { changes: u.changes });
  for (const u of plan.users.reactivate)
    out.set(taskKey('user.reactivate', u.externalId), {
      changes: [{ path: 'active', before: false, after: true }, ...u.changes.filter((c) => c.path !== 'active')],
    });
  for (const g of plan.groups.update)
    if (g.changes.length > 0)
      out.set(taskKey(g.adopt && g.ops.length === 0 ? 'group.adopt' : 'group.update', g.externalId), { changes: g.changes });
  for (const u of plan.users.deactivate) out.set(taskKey('user.deactivate', u.externalId), { reason: u.reason });
  for (const u of plan.users.delete) out.set(taskKey('user.delete', u.externalId), { reason: u.reason });
  for (const [key, detail] of attributeDetails(plan)) out.set(key, detail);
  return out;
}

/**
 * Records of what the deletion guard held in this plan: one per held deactivation, deletion
 * and group deletion, and one per group whose member removals were held.
 */
export function heldRecords(tenant: string, runId: string, plan: Plan, now: number): NewRecord[] {
  if (!plan.guard.tripped) return [];
  const time = new Date(now).toISOString();
  const why = `held by the deletion guard: ${plan.guard.reasons.join('; ')}`;
  const base = { time, tenant, runId, result: 'held' as const };
  const out: NewRecord[] = [];
  for (const u of plan.users.deactivate)
    out.push({
      ...base,
      action: 'user.deactivate',
      object: { type: 'user', externalId: u.externalId, name: u.userName, id: u.id },
      changes: [{ path: 'active', before: true, after: false }],
      reason: `${u.reason}; ${why}`,
    });
  for (const u of plan.users.delete)
    out.push({
      ...base,
      action: 'user.delete',
      object: { type: 'user', externalId: u.externalId, name: u.userName, id: u.id },
      reason: `${u.reason}; ${why}`,
    });
  for (const g of plan.groups.delete)
    out.push({
      ...base,
      action: 'group.delete',
      object: { type: 'group', externalId: g.externalId, name: g.displayName, id: g.id },
      reason: why,
    });
  for (const m of plan.memberships) {
    if (m.remove.length === 0) continue;
    out.push({
      ...base,
      action: 'group.members',
      object: {
        type: 'group',
        externalId: m.group.externalId,
        name: m.group.displayName,
        ...(m.group.id !== undefined ? { id: m.group.id } : {}),
      },
      members: { added: [], removed: m.remove.slice(0, MAX_MEMBERS_LISTED).map(memberName), addedCount: 0, removedCount: m.remove.length },
      reason: why,
    });
  }
  out.push(...heldAttributeRecords(base, plan, why));
  out.push(...heldHandoverRecords(base, plan, why));
  return out;
}
