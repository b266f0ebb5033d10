/**
 * User attributes in the provisioning log: a user's value changes as `userAttributes.<name>`
 * before → after, definitions created or updated, and the take-aways the deletion guard held.
 * Values are logged like the SCIM attribute changes the plan shows (attributes whose name looks
 * like a credential are dropped by record.ts).
 */
import type { Plan } from '../reconcile/plan-types.ts';
import type { NewRecord, TaskDetail } from './record.ts';

export const USER_ATTRIBUTE_PATH = 'userAttributes.';

/** Details keyed like record.ts `taskKey` (`action|externalId`): what the attribute tasks alone do not carry. */
export function attributeDetails(plan: Plan): Array<[string, TaskDetail]> {
  const a = plan.attributes;
  if (!a) return [];
  const held = plan.guard.tripped;
  const out: Array<[string, TaskDetail]> = [];
  for (const u of a.users) {
    const applied = held ? u.changes.filter((c) => !c.takesAway) : u.changes;
    if (applied.length > 0)
      out.push([
        `user.attributes|${u.externalId}`,
        { changes: applied.map((c) => ({ path: `${USER_ATTRIBUTE_PATH}${c.attribute}`, before: c.before, after: c.after })) },
      ]);
  }
  for (const d of a.definitions.create)
    out.push([`attribute.create|${d.name}`, { changes: [{ path: 'type', before: null, after: d.type }] }]);
  for (const d of a.definitions.update)
    out.push([`attribute.update|${d.name}`, { changes: [{ path: 'description', before: d.before, after: d.after }] }]);
  return out;
}

/** One `held` record per user whose values the guard kept from being taken away. */
export function heldAttributeRecords(base: Pick<NewRecord, 'time' | 'tenant' | 'runId'>, plan: Plan, why: string): NewRecord[] {
  if (!plan.guard.tripped || !plan.attributes) return [];
  const out: NewRecord[] = [];
  for (const u of plan.attributes.users) {
    const kept = u.changes.filter((c) => c.takesAway);
    if (kept.length === 0) continue;
    out.push({
      ...base,
      action: 'user.attributes',
      result: 'held',
      object: { type: 'user', externalId: u.externalId, name: u.userName, ...(u.id !== null ? { id: u.id } : {}) },
      changes: kept.map((c) => ({ path: `${USER_ATTRIBUTE_PATH}${c.attribute}`, before: c.before, after: c.after })),
      reason: why,
    });
  }
  return out;
}
