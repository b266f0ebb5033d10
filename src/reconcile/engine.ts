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

export interface ReconcileContext {
  tenant: string;
  config: ProvisioningConfig;
  source: Source;
  target: ScimTarget;
  ledgerStore: LedgerStore;
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
  // Source and platform are read in parallel; if either fails the other is aborted, and
  // nothing is planned: never plan from a partial read.
  const abort = new AbortController();
  const signal = ctx.signal ? AbortSignal.any([ctx.signal, abort.signal]) : abort.signal;
  const failFast = <T>(p: Promise<T>): Promise<T> =>
    p.catch((e: unknown) => {
      abort.abort(e);
      throw e;
    });
  const sourceRead = failFast(ctx.source.read(signal)).then((d) => ({ d, at: performance.now() }));
  const platformRead = failFast(Promise.all([ctx.target.listUsers(signal), ctx.target.listGroups(signal), Ledger.load(ctx.ledgerStore)])).then((r) => ({ r, at: performance.now() }));
  const [{ d: desired, at: sourceAt }, { r: [users, groups, ledger], at: platformAt }] = await Promise.all([sourceRead, platformRead]);
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
  return { plan, ledger, timings: { sourceMs: sourceAt - t0, platformMs: platformAt - t0, planMs: performance.now() - t1 } };
}

export async function applyReconcile(
  ctx: ReconcileContext,
  planned: PlannedReconcile,
  opts: Omit<ApplyOptions, 'concurrency' | 'requestsPerSecond' | 'adoptExisting'> & Partial<Pick<ApplyOptions, 'concurrency' | 'requestsPerSecond'>>,
): Promise<ApplyResult> {
  return applyPlan(
    planned.plan,
    { target: ctx.target, ledger: planned.ledger, ledgerStore: ctx.ledgerStore },
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
