/**
 * Apply of the attributes section: definitions first, then one task per user with all of its
 * value upserts, between the users phase (the account exists) and group memberships. A task
 * writes what it can, records each written value in the ledger, and fails with every
 * attribute it could not write, so one user's failure never stops another's.
 */
import { ErrorCodes, SyncError, isSyncError, type ErrorKind } from '../../errors.ts';
import type { AttributeValue, UserAttributeTarget } from '../../platform/user-attributes.ts';
import type { LedgerWriter } from '../ledger.ts';
import type { Plan } from '../plan-types.ts';
import type { AttributeState } from './ledger-section.ts';
import type { AttributeTask } from './types.ts';

export type AttributePhaseName = 'attribute-definitions' | 'attribute-values';

/** The two attribute phases of a plan; take-aways are left out while the guard holds destructive work. */
export function attributePhases(plan: Plan): Array<{ name: AttributePhaseName; tasks: AttributeTask[] }> {
  const a = plan.attributes;
  if (!a) return [];
  const held = plan.guard.tripped;
  const defs: AttributeTask[] = [
    ...a.definitions.create.map((d): AttributeTask => ({ action: 'attribute.create', externalId: d.name, name: d.name, definition: d })),
    ...a.definitions.update.map(
      (d): AttributeTask => ({
        action: 'attribute.update',
        id: d.id,
        externalId: d.name,
        name: d.name,
        definition: { name: d.name, type: d.type, ...(d.after !== null ? { description: d.after } : {}) },
      }),
    ),
  ];
  const ids = new Map(a.definitions.existing.map((e) => [e.name, e.id]));
  const synced = [...a.definitions.existing.map((e) => e.name), ...a.definitions.create.map((d) => d.name)];
  const adopting = new Set([...plan.users.update, ...plan.users.reactivate].filter((u) => u.adopt).map((u) => u.id));
  const values: AttributeTask[] = [];
  for (const u of a.users) {
    const changes = held ? u.changes.filter((c) => !c.takesAway) : u.changes;
    if (changes.length === 0) continue;
    values.push({
      action: 'user.attributes',
      id: u.id ?? undefined,
      externalId: u.externalId,
      name: u.userName,
      upserts: changes.map((c) => ({ attribute: c.attribute, attributeId: ids.get(c.attribute), value: c.after })),
      known: Object.fromEntries(changes.map((c) => [c.attribute, c.before])),
      synced,
      requireManaged: u.id !== null && adopting.has(u.id),
    });
  }
  return [
    { name: 'attribute-definitions', tasks: defs },
    { name: 'attribute-values', tasks: values },
  ];
}

export interface AttributeTaskDeps {
  attributes: UserAttributeTarget | undefined;
  ledger: LedgerWriter;
  now: () => number;
}

export async function executeAttributeTask(
  task: AttributeTask,
  deps: AttributeTaskDeps,
): Promise<{ action: AttributeTask['action']; id?: string; externalId: string; name: string }> {
  const target = deps.attributes;
  if (!target) throw new SyncError(ErrorCodes.CONFIG_INVALID, 'fatal', 'user attributes are planned but no attribute client is configured');
  const { ledger } = deps;
  const base = { action: task.action, externalId: task.externalId, name: task.name };
  switch (task.action) {
    case 'attribute.create': {
      const { definition, adopted } = await target.createDefinition(task.definition);
      if (definition.type !== task.definition.type) {
        throw new SyncError(
          ErrorCodes.CONFLICT,
          'conflict',
          `create user attribute ${task.name}: it was created meanwhile with type ${definition.type}, not ${task.definition.type}`,
        );
      }
      // A 409 means someone else created it: usable, but not ours to change later.
      await ledger.recordAttributeDefinition?.(task.name, { id: definition.id, created: !adopted });
      return { ...base, id: definition.id };
    }
    case 'attribute.update':
      await target.updateDefinition(task.id, task.definition);
      return { ...base, id: task.id };
    case 'user.attributes': {
      const id = task.id ?? (await ledger.idFor('user', task.externalId));
      if (id === undefined) throw new Error(`user ${task.name} was not created, so its attributes were not written`);
      if (task.requireManaged && !(await ledger.has('user', id))) {
        // Adopted in this run but the adoption failed: never write to an account we do not manage.
        throw new SyncError(
          ErrorCodes.REJECTED,
          'rejected',
          `user ${task.name} is not managed (its adoption failed), so its attributes were not written`,
        );
      }
      const prev = task.id !== undefined ? await ledger.attributeState?.(id) : undefined;
      // A user created in this run has nothing set; an existing user without a ledger copy (not
      // expected: planning recorded one) gets a copy dated 0, so the next run reads it again.
      const state: AttributeState = prev
        ? { readAt: prev.readAt, values: { ...prev.values } }
        : { readAt: task.id === undefined ? deps.now() : 0, values: Object.fromEntries(task.synced.map((n) => [n, null])) };
      for (const [k, v] of Object.entries(task.known)) if (!(k in state.values)) state.values[k] = v;
      const failures: Array<{ attribute: string; error: unknown }> = [];
      for (const u of task.upserts) {
        try {
          const attributeId = u.attributeId ?? (await ledger.attributeDefinition?.(u.attribute))?.id;
          if (attributeId === undefined) throw new Error(`the definition of ${u.attribute} was not created`);
          await target.upsertValue(id, attributeId, u.value);
          state.values[u.attribute] = u.value as AttributeValue | null;
        } catch (e) {
          failures.push({ attribute: u.attribute, error: e });
          if (isSyncError(e) && e.kind === 'fatal') break;
        }
      }
      await ledger.recordAttributeState?.(id, state);
      if (failures.length > 0) {
        const first = failures[0]?.error;
        const kind: ErrorKind = isSyncError(first) ? first.kind : 'rejected';
        const text = failures.map((f) => `${f.attribute} (${f.error instanceof Error ? f.error.message : String(f.error)})`).join('; ');
        throw new SyncError(
          isSyncError(first) ? first.code : ErrorCodes.REJECTED,
          kind,
          `attributes of user ${task.name} not written: ${text}`,
        );
      }
      return { ...base, id };
    }
  }
}
