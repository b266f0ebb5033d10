/**
 * Pure attribute planning: configured rules × subjects × what the platform holds → the
 * `attributes` section of the plan. No I/O: the definitions and each user's current values
 * were gathered before (plan-step.ts).
 */
import type { AttributeDefinition, AttributeValue } from '../../platform/user-attributes.ts';
import { sameAttributeValue, takesAway } from './coerce.ts';
import type { UserAttributeRule } from './config-schema.ts';
import { desiredValue } from './desired.ts';
import type { LedgerDefinition } from './ledger-section.ts';
import type { AttributeSubject } from './subjects.ts';
import type { AttributeMover, AttributePlan, AttributeValueChange } from './types.ts';

export interface DefinitionDecision {
  /** Rules whose values are synced this run (definition present with the right type, or created now). */
  synced: UserAttributeRule[];
  /** Names of definitions created in this run: nobody has a value yet. */
  fresh: Set<string>;
  existing: Array<{ name: string; id: string; type: string; createdByTool: boolean }>;
  plan: Omit<AttributePlan['definitions'], 'existing'>;
  errors: AttributePlan['errors'];
  /** Ledger entries to forget: the definition we knew is gone or was replaced. */
  forget: string[];
}

export function decideDefinitions(
  rules: UserAttributeRule[],
  platform: AttributeDefinition[],
  ledgerDef: (name: string) => LedgerDefinition | undefined,
): DefinitionDecision {
  const d: DefinitionDecision = { synced: [], fresh: new Set(), existing: [], plan: { create: [], update: [] }, errors: [], forget: [] };
  const byName = new Map(platform.map((p) => [p.name, p]));
  for (const rule of rules) {
    const found = byName.get(rule.name);
    const mine = ledgerDef(rule.name);
    if (mine && mine.id !== found?.id) d.forget.push(rule.name);
    if (!found) {
      d.plan.create.push({
        name: rule.name,
        type: rule.type,
        ...(rule.description !== undefined ? { description: rule.description } : {}),
      });
      d.synced.push(rule);
      d.fresh.add(rule.name);
      continue;
    }
    if (found.type !== rule.type) {
      d.errors.push({
        attribute: rule.name,
        reason: `the platform's definition ${found.name} (id ${found.id}) has type ${found.type}, the config says ${rule.type}: its values are not synced; the tool never changes a definition's type (fix the config, or change the definition on the platform)`,
      });
      continue;
    }
    const createdByTool = mine?.id === found.id && mine.created;
    d.existing.push({ name: rule.name, id: found.id, type: found.type, createdByTool });
    d.synced.push(rule);
    if (createdByTool && rule.description !== undefined && rule.description !== (found.description ?? undefined)) {
      d.plan.update.push({ id: found.id, name: rule.name, type: rule.type, before: found.description ?? null, after: rule.description });
    }
  }
  return d;
}

export interface UserValues {
  subject: AttributeSubject;
  /** Current platform values by attribute name (null = unset). */
  current: Record<string, AttributeValue | null>;
}

export function diffUsers(synced: UserAttributeRule[], users: UserValues[]): Pick<AttributePlan, 'users' | 'movers' | 'rejected'> {
  const out: Pick<AttributePlan, 'users' | 'movers' | 'rejected'> = { users: [], movers: [], rejected: [] };
  for (const { subject, current } of users) {
    const { user } = subject;
    const changes: AttributeValueChange[] = [];
    const moved: AttributeMover['changes'] = [];
    for (const rule of synced) {
      const want = desiredValue(rule, user);
      if (!want.ok) {
        out.rejected.push({
          externalId: user.externalId,
          userName: user.userName,
          attribute: rule.name,
          reason: `${rule.type}: ${want.reason}`,
        });
        continue;
      }
      const before = current[rule.name] ?? null;
      // A handed-over account starts clean: the previous owner's values are not kept for the new one.
      if (want.value === null && rule.whenMissing === 'keep' && subject.handover !== true) continue;
      if (sameAttributeValue(want.value, before)) continue;
      const away = before !== null && (want.value === null || (rule.accessRelevant && takesAway(before, want.value)));
      changes.push({ attribute: rule.name, before, after: want.value, takesAway: away });
      if (rule.accessRelevant && subject.id !== undefined && before !== null && want.value !== null)
        moved.push({ attribute: rule.name, before, after: want.value });
    }
    if (changes.length > 0) out.users.push({ id: subject.id ?? null, externalId: user.externalId, userName: user.userName, changes });
    if (moved.length > 0 && subject.id !== undefined)
      out.movers.push({ id: subject.id, externalId: user.externalId, userName: user.userName, changes: moved });
  }
  return out;
}
