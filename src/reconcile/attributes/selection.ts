/**
 * User attributes under `--only` (one user on demand) and in a saved plan (`plan --out`):
 * the attributes section restricted to the selected user, and one fingerprinted operation per
 * value change and definition change, so `apply --plan` refuses a plan whose values moved.
 */
import type { Plan } from '../plan-types.ts';
import { mergeAttributeGuard } from './guard.ts';
import { summarizeAttributes } from './plan-step.ts';

type Ref = { userName?: string | undefined; externalId?: string | undefined };

/** Restricts `plan.attributes` (copied from the full plan) to the users `selects` picks; guard and summary follow. */
export function restrictAttributePlan(plan: Plan, full: Plan, selects: (r: Ref) => boolean, allowDeletes: boolean): void {
  const a = full.attributes;
  if (!a) return;
  const users = a.users.filter(selects);
  // Definitions a selected value needs are still created; nothing else is.
  const needed = new Set(users.flatMap((u) => u.changes.map((c) => c.attribute)));
  const attrs = {
    ...a,
    definitions: { existing: a.definitions.existing, create: a.definitions.create.filter((d) => needed.has(d.name)), update: [] },
    users,
    movers: a.movers.filter(selects),
    rejected: a.rejected.filter(selects),
    skipped: a.skipped.filter(selects),
  };
  attrs.summary = summarizeAttributes(attrs);
  plan.attributes = attrs;
  const g = full.guard.attributes;
  const limits = { maxAttributeClears: g?.maxAttributeClears ?? 0, maxAttributeClearPercent: 100 };
  const usersAffected = users.filter((u) => u.changes.some((c) => c.takesAway)).length;
  plan.guard = mergeAttributeGuard(plan.guard, {
    clears: attrs.summary.takeAways,
    usersAffected,
    users: users.length,
    limits,
    allowDeletes,
  });
  const defs = attrs.summary.definitionsCreate;
  plan.summary = {
    ...plan.summary,
    attributeDefinitions: defs,
    attributeUsers: attrs.summary.usersChanged,
    changes: plan.summary.changes + defs + attrs.summary.valuesSet + attrs.summary.valuesClear,
  };
}

/** Operations of the attributes section for plan-file.ts: key, label, fingerprinted content. */
export function attributeOperations(plan: Plan): Array<[string, string, unknown]> {
  const a = plan.attributes;
  if (!a) return [];
  const out: Array<[string, string, unknown]> = [];
  for (const d of a.definitions.create)
    out.push([`attribute:create:${d.name}`, `create user attribute ${d.name} (${d.type})`, [d.type, d.description ?? null]]);
  for (const d of a.definitions.update) out.push([`attribute:update:${d.id}`, `update user attribute ${d.name}`, [d.after]]);
  for (const u of a.users) {
    for (const c of u.changes)
      out.push([
        `attribute:value:${u.id ?? `new:${u.externalId}`}:${c.attribute}`,
        `${c.after === null ? 'clear' : 'set'} ${c.attribute} of ${u.userName}`,
        [c.after, c.takesAway, c.before],
      ]);
  }
  return out;
}
