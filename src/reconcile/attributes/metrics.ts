/**
 * User-attribute metrics, recorded through observability/instrument.ts. The `attribute` label
 * is the configured attribute name: a closed, operator-chosen set (never a user or a value).
 * Per-user operations carry no attribute label.
 */
import { Counter } from 'prom-client';
import { METRIC_PREFIX, registry } from '../../observability/metrics.ts';
import type { Logger } from '../../observability/logger.ts';
import type { Plan } from '../plan-types.ts';

const p = METRIC_PREFIX;

export const attributeMetrics = {
  operations: new Counter({
    name: `${p}user_attribute_operations_total`,
    help: 'User-attribute writes applied: operation create_definition, update_definition or write_values (one per user); result ok, failed',
    labelNames: ['tenant', 'operation', 'result'] as const,
    registers: [registry],
  }),
  planned: new Counter({
    name: `${p}user_attribute_changes_planned_total`,
    help: 'User-attribute value changes planned, by configured attribute and kind (set, clear, takes_away, rejected)',
    labelNames: ['tenant', 'attribute', 'kind'] as const,
    registers: [registry],
  }),
  errors: new Counter({
    name: `${p}user_attribute_errors_total`,
    help: 'Plans whose user-attribute sync reported an error (wrong-type definition, refused API), by configured attribute ("all" for the whole sync)',
    labelNames: ['tenant', 'attribute'] as const,
    registers: [registry],
  }),
};

const OPERATION: Record<string, string> = {
  'attribute.create': 'create_definition',
  'attribute.update': 'update_definition',
  'user.attributes': 'write_values',
};

export function isAttributeAction(action: string): boolean {
  return action in OPERATION;
}

export function countAttributeChange(tenant: string, action: string, result: 'ok' | 'failed'): void {
  attributeMetrics.operations.inc({ tenant, operation: OPERATION[action] ?? action, result });
}

/** Metrics of a plan's attributes section, plus one log line per mover and per error (the sync's audit trail). */
export function recordAttributePlan(tenant: string, plan: Plan, logger: Logger): void {
  const a = plan.attributes;
  if (!a) return;
  for (const m of a.movers)
    logger.info(
      {
        action: 'user.attributes.mover',
        id: m.id,
        externalId: m.externalId,
        name: m.userName,
        attributes: m.changes.map((c) => c.attribute),
      },
      'user attribute mover: an access-relevant attribute changes',
    );
  for (const e of a.errors) logger.warn({ attribute: e.attribute, reason: e.reason }, 'user attribute error');
  for (const u of a.users) {
    for (const ch of u.changes) {
      attributeMetrics.planned.inc({ tenant, attribute: ch.attribute, kind: ch.after === null ? 'clear' : 'set' });
      if (ch.takesAway) attributeMetrics.planned.inc({ tenant, attribute: ch.attribute, kind: 'takes_away' });
    }
  }
  for (const r of a.rejected) attributeMetrics.planned.inc({ tenant, attribute: r.attribute, kind: 'rejected' });
  for (const e of a.errors) attributeMetrics.errors.inc({ tenant, attribute: e.attribute ?? 'all' });
}
