/**
 * One reconcile: read the complete desired state, snapshot the platform, plan, and
 * (optionally) apply. Used unchanged by the one-shot CLI and by the daemon's jobs.
 */
import type { ProvisioningConfig } from '../config/schema.ts';
import type { Source } from '../sources/source.ts';
import type { ApplyOptions, ApplyResult } from './apply.ts';
import { Ledger, type LedgerStore, type ObjectKind } from './ledger.ts';
import type { DeleteApproval, Plan, PlanWarning } from './plan-types.ts';
import type { ScimGroup, ScimUser } from '../platform/scim/types.ts';
import { buildPlan } from './planner.ts';
import { comparedGroupAttributes, comparedUserAttributes } from '../identity/mapping.ts';
import { createIntern } from '../platform/scim/compact.ts';
import type { ScimTarget } from './target.ts';
import type { UserAttributeTarget } from '../platform/user-attributes.ts';
import { addAttributePlan } from './attributes/plan-step.ts';
import type { PlanInputs } from './plan-basis.ts';
import { withSpan } from '../observability/tracing/spans.ts';

export interface ReconcileContext {
  tenant: string;
  config: ProvisioningConfig;
  source: Source;
  target: ScimTarget;
  ledgerStore: LedgerStore;
  /** The platform's user-attribute API; set when provisioning.userAttributes is configured. */
  attributes?: UserAttributeTarget | undefined;
  now?: () => number;
  signal?: AbortSignal;
}

export interface PlannedReconcile {
  plan: Plan;
  ledger: Ledger;
  timings: { sourceMs: number; platformMs: number; planMs: number };
  /** The source's and the platform's objects the plan was made from (only with PlanOptions.keepInputs). */
  inputs?: PlanInputs;
}

/** Where planning is, for a progress display: the phase, and the objects listed so far. */
export interface PlanProgress {
  phase: 'source' | 'platform' | 'plan';
  users: number;
  groups: number;
}

export interface PlanOptions {
  allowDeletes: boolean;
  /** An operator's approval bound to the plan that was held (`approve-deletes`). */
  approval?: DeleteApproval | undefined;
  /** Keep the inputs on the result (a saved plan's basis, `--only`'s lookup); they are otherwise dropped. */
  keepInputs?: boolean;
  onProgress?: (p: PlanProgress) => void;
}

export async function planReconcile(ctx: ReconcileContext, opts: PlanOptions): Promise<PlannedReconcile> {
  const now = ctx.now ?? Date.now;
  const t0 = performance.now();
  // The source is read completely first (or the run stops before any platform request:
  // never plan from a partial read), then the platform is listed. Reading them one after
  // the other keeps the two peaks of memory apart, which matters at 100,000 users.
  opts.onProgress?.({ phase: 'source', users: 0, groups: 0 });
  const tenant = { 'scimsync.tenant': ctx.tenant };
  const desired = await withSpan('reconcile source read', tenant, async (span) => {
    const d = await ctx.source.read(ctx.signal);
    span.set({ 'scimsync.users': d.users.length, 'scimsync.groups': d.groups.length });
    return d;
  });
  const sourceAt = performance.now();
  const warnings: PlanWarning[] = [];
  const { users, groups, ledger } = await withSpan('reconcile platform listing', tenant, async (span) => {
    const listed = await snapshotPlatform(ctx, opts.onProgress);
    // A managed object missing from the listing is confirmed gone (404) before the ledger
    // forgets it; one the listing skipped is planned like the others (a leaver stays a leaver).
    for (const u of await confirmMissing(ctx, 'user', listed.users, listed.ledger, warnings)) listed.users.push(u);
    for (const g of await confirmMissing(ctx, 'group', listed.groups, listed.ledger, warnings)) listed.groups.push(g);
    span.set({ 'scimsync.users': listed.users.length, 'scimsync.groups': listed.groups.length, 'scimsync.warnings': warnings.length });
    return listed;
  });
  const platformAt = performance.now();
  opts.onProgress?.({ phase: 'plan', users: users.length, groups: groups.length });
  const t1 = platformAt;
  const plan = await withSpan('reconcile plan', tenant, async (span) => {
    const p = buildPlan({
      tenant: ctx.tenant,
      source: ctx.source.describe,
      desired,
      platformUsers: users,
      platformGroups: groups,
      ledger,
      config: ctx.config,
      allowDeletes: opts.allowDeletes,
      approval: opts.approval,
      warnings,
      now: now(),
    });
    // planned after the user plan, from the same inputs (GET requests only).
    if (ctx.attributes && ctx.config.userAttributes.length > 0) {
      await addAttributePlan(p, {
        target: ctx.attributes,
        desired,
        platformUsers: users,
        ledger,
        config: ctx.config,
        allowDeletes: opts.allowDeletes,
        approval: opts.approval,
        now: now(),
        signal: ctx.signal,
      });
    }
    span.set({ 'scimsync.changes': p.summary.changes, 'scimsync.guard_tripped': p.guard.tripped, 'scimsync.rejected': p.rejected.length });
    return p;
  });
  const timings = { sourceMs: sourceAt - t0, platformMs: platformAt - sourceAt, planMs: performance.now() - t1 };
  if (!opts.keepInputs) return { plan, ledger, timings };
  const inputs: PlanInputs = { sourceUsers: desired.users, sourceGroups: desired.groups, platformUsers: users, platformGroups: groups };
  return { plan, ledger, timings, inputs };
}

/**
 * The platform's users and groups and the ledger, listed together. Only what the mapping
 * compares is kept of each listed object, and each id once across the users, the groups'
 * members and the ledger (platform/scim/compact.ts); the pool of ids goes when this returns.
 */
async function snapshotPlatform(
  ctx: ReconcileContext,
  onProgress?: (p: PlanProgress) => void,
): Promise<{ users: ScimUser[]; groups: ScimGroup[]; ledger: Ledger }> {
  const intern = createIntern();
  const seen = { phase: 'platform' as const, users: 0, groups: 0 };
  const counted = (kind: 'users' | 'groups') =>
    onProgress
      ? {
          onPage: (n: number) => {
            seen[kind] += n;
            onProgress({ ...seen });
          },
        }
      : {};
  onProgress?.({ ...seen });
  const [users, groups, ledger] = await Promise.all([
    ctx.target.listUsers(ctx.signal, { attributes: comparedUserAttributes(ctx.config.mapping.user), intern, ...counted('users') }),
    ctx.target.listGroups(ctx.signal, { attributes: comparedGroupAttributes(ctx.config.mapping.group), intern, ...counted('groups') }),
    Ledger.load(ctx.ledgerStore, intern),
  ]);
  return { users, groups, ledger };
}

/** How many GETs run at once when confirming absences. */
const CONFIRM_CONCURRENCY = 8;

async function confirmMissing<T extends ScimUser | ScimGroup>(
  ctx: ReconcileContext,
  kind: ObjectKind,
  listed: T[],
  ledger: Ledger,
  warnings: PlanWarning[],
): Promise<T[]> {
  const seen = new Set(listed.map((o) => o.id));
  const missing = ledger.ids(kind).filter((id) => !seen.has(id));
  const found: T[] = [];
  const type = kind === 'user' ? 'Users' : 'Groups';
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < missing.length) {
      const id = missing[next++] as string;
      const obj = await ctx.target.get<T>(type, id, ctx.signal);
      if (obj === undefined) continue;
      found.push(obj);
      warnings.push({
        code: 'listing-incomplete',
        ref: `${type}/${id}`,
        message: `the listing of ${type} did not include this managed ${kind}, but it exists (read by id): planned from that read`,
      });
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONFIRM_CONCURRENCY, missing.length) }, worker));
  for (const o of found) seen.add(o.id);
  // Deleted behind our back (confirmed 404): no longer ours to track.
  ledger.prune(kind, seen);
  return found;
}

export async function applyReconcile(
  ctx: ReconcileContext,
  planned: PlannedReconcile,
  opts: Omit<ApplyOptions, 'concurrency' | 'requestsPerSecond' | 'adoptExisting'> &
    Partial<Pick<ApplyOptions, 'concurrency' | 'requestsPerSecond'>>,
): Promise<ApplyResult> {
  // Loaded by the run that applies: a plan (`plan`, the daemon's held runs) never needs it.
  const { applyPlan } = await import('./apply.ts');
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
