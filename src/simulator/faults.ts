/**
 * Fault-rule matching. Rules are data (FaultRule); this module only decides, per request,
 * which of them fire. Spent counters live here, so callers' rule objects are never mutated.
 */
import type { FaultKind, FaultRule } from './types.ts';
import { SCIM_PREFIX } from './store.ts';

const LIST_KINDS = new Set<FaultKind>([
  'lying-page',
  'capped-page',
  'changing-total',
  'duplicate-across-pages',
  'empty-page',
  'mutate-between-pages',
]);
const ACTION_KINDS = new Set<FaultKind>(['status', 'reset', 'reset-after-commit']);
const BODY_KINDS = new Set<FaultKind>(['truncate', 'drip']);

/** The time range a 'drop-events' rule removes from audit exports, epoch ms. */
export function dropRange(rule: FaultRule): { fromMs: number; toMs: number } {
  return {
    fromMs: rule.dropFrom ? Date.parse(rule.dropFrom) : Number.NEGATIVE_INFINITY,
    toMs: rule.dropTo ? Date.parse(rule.dropTo) : Number.POSITIVE_INFINITY,
  };
}

export interface FaultPlan {
  latencyMs: number;
  /** status, reset or reset-after-commit. */
  action?: FaultRule;
  /** truncate or drip. */
  body?: FaultRule;
  /** Paging faults, only for collection GETs. */
  list: FaultRule[];
  /** 'drop-events' rules, only for audit exports whose window meets their range. */
  drop: FaultRule[];
  fired: FaultKind[];
}

/** '/scim/v2/…' is an alias of '/api/scim/v2/…'; rules may name either. */
export function canonicalPath(path: string): string {
  return path.startsWith('/scim/v2/') || path === '/scim/v2' ? `/api${path}` : path;
}

export class FaultEngine {
  private rules: FaultRule[] = [];
  private used: number[] = [];
  private readonly random: () => number;

  constructor(rules: FaultRule[], random: () => number) {
    this.random = random;
    this.set(rules);
  }

  set(rules: FaultRule[]): void {
    this.rules = [...rules];
    this.used = rules.map(() => 0);
  }

  /** `exportWindow`: the window of an audit-log export request (epoch ms), else undefined. */
  plan(method: string, path: string, isList: boolean, exportWindow?: { fromMs: number; toMs: number }): FaultPlan {
    const plan: FaultPlan = { latencyMs: 0, list: [], drop: [], fired: [] };
    const canonical = canonicalPath(path);
    this.rules.forEach((rule, i) => {
      if (rule.method && rule.method.toUpperCase() !== method) return;
      if (rule.pathPrefix && !path.startsWith(rule.pathPrefix) && !canonical.startsWith(canonicalPath(rule.pathPrefix))) return;
      if (LIST_KINDS.has(rule.kind) && !isList) return;
      if (rule.kind === 'drop-events') {
        const r = dropRange(rule);
        if (!exportWindow || r.fromMs >= exportWindow.toMs || r.toMs <= exportWindow.fromMs) return;
      }
      // Only one action and one body fault per request: later ones are not rolled, so not spent.
      if (ACTION_KINDS.has(rule.kind) && plan.action) return;
      if (BODY_KINDS.has(rule.kind) && plan.body) return;
      if (rule.times !== undefined && (this.used[i] ?? 0) >= rule.times) return;
      if (this.random() >= (rule.rate ?? 1)) return;
      this.used[i] = (this.used[i] ?? 0) + 1;
      plan.fired.push(rule.kind);
      if (rule.kind === 'latency') plan.latencyMs += Math.max(0, (rule.latencyMs ?? 0) + this.random() * (rule.jitterMs ?? 0));
      else if (ACTION_KINDS.has(rule.kind)) plan.action = rule;
      else if (BODY_KINDS.has(rule.kind)) plan.body = rule;
      else if (rule.kind === 'drop-events') plan.drop.push(rule);
      else plan.list.push(rule);
    });
    return plan;
  }
}

/** True when `path` is a SCIM collection (the only place paging faults make sense). */
export function isCollectionPath(path: string): boolean {
  const c = canonicalPath(path).replace(/\/+$/, '');
  return c === `${SCIM_PREFIX}/Users` || c === `${SCIM_PREFIX}/Groups`;
}
