/**
 * One reconcile: read the complete desired state, snapshot the platform, plan, and
 * (optionally) apply. Used unchanged by the one-shot CLI and by the daemon's jobs.
 */
import type { ProvisioningConfig } from '../config/schema.ts';
import type { Source } from '../sources/source.ts';
import { applyPlan, type ApplyOptions, type ApplyResult } from './apply.ts';
import { Ledger, type LedgerStore } from './ledger.ts';
import type { Plan } from './plan-types.ts';
import { buildPlan } from './planner.ts';
import type { ScimTarget } from './target.ts';
import type { UserAttributeTarget } from '../platform/user-attributes.ts'; // [h17]
import { addAttributePlan } from './attributes/plan-step.ts'; // [h17]

export interface ReconcileContext {
  tenant: string;
  config: ProvisioningConfig;
  source: Source;
  target: ScimTarget;
  ledgerStore: LedgerStore;
  /** [h17] The platform's user-attribute API; set when provisioning.userAttributes is configured. */
  attributes?: UserAttributeTarget | undefined;
  now?: () => number;
  signal?: AbortSignal;
}

export interface PlannedReconcile {
  plan: Plan;
  ledger: Ledger;
  timings: { sourceMs: number; platformMs: number; planMs: number };
}

export async function planReconcile(ctx: ReconcileContext, opts: { allowDeletes: boolean }): Promise<PlannedReconcile> {
  const now = ctx.now ?? Date.now;
  const t0 = performance.now();
  // The source is read completely first (or the run stops before any platform request:
  // never plan from a partial read), then the platform is listed. Reading them one after
  // the other keeps the two peaks of memory apart, which matters at 100,000 users.
  const desired = await ctx.source.read(ctx.signal);
  const sourceAt = performance.now();
  const [users, groups, ledger] = await Promise.all([ctx.target.listUsers(ctx.signal), ctx.target.listGroups(ctx.signal), Ledger.load(ctx.ledgerStore)]);
  const platformAt = performance.now();
  // Objects deleted behind our back are no longer ours to track.
  ledger.prune('user', new Set(users.map((u) => u.id)));
  ledger.prune('group', new Set(groups.map((g) => g.id)));
  const t1 = performance.now();
  const plan = buildPlan({
    tenant: ctx.tenant,
    source: ctx.source.describe,
    desired,
    platformUsers: users,
    platformGroups: groups,
    ledger,
    config: ctx.config,
    allowDeletes: opts.allowDeletes,
    now: now(),
  });
  // [h17 user attributes] planned after the user plan, from the same inputs (GET requests only).
  if (ctx.attributes && ctx.config.userAttributes.length > 0) {
    await addAttributePlan(plan, { target: ctx.attributes, desired, platformUsers: users, ledger, config: ctx.config, allowDeletes: opts.allowDeletes, now: now(), signal: ctx.signal });
  }
  return { plan, ledger, timings: { sourceMs: sourceAt - t0, platformMs: platformAt - sourceAt, planMs: performance.now() - t1 } };
}

export async function applyReconcile(
  ctx: ReconcileContext,
  planned: PlannedReconcile,
  opts: Omit<ApplyOptions, 'concurrency' | 'requestsPerSecond' | 'adoptExisting'> & Partial<Pick<ApplyOptions, 'concurrency' | 'requestsPerSecond'>>,
): Promise<ApplyResult> {
  return applyPlan(
    planned.plan,
    { target: ctx.target, ledger: planned.ledger, ledgerStore: ctx.ledgerStore, attributes: ctx.attributes },
    {
      concurrency: opts.concurrency ?? ctx.config.apply.concurrency,
      requestsPerSecond: opts.requestsPerSecond ?? ctx.config.apply.requestsPerSecond,
      adoptExisting: ctx.config.matching.adoptExisting,
      ...(ctx.signal ? { signal: ctx.signal } : {}),
      ...(ctx.now ? { now: ctx.now } : {}),
      ...(opts.onProgress ? { onProgress: opts.onProgress } : {}),
      ...(opts.onChange ? { onChange: opts.onChange } : {}),
    },
  );
}
