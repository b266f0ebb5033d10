/**
 * The change path end to end, for the targeted scenarios and the change model: a directory
 * edit becomes a source delta (the difference of two complete reads, as a change-reporting
 * source delivers it), the delta updates the desired cache, the targeted planner plans the
 * affected identities against the simulator, and the plan is applied with the real executor.
 */
import { isDeepStrictEqual } from 'node:util';
import { expect } from 'vitest';
import type { DesiredState, SourceRejection } from '../../../src/identity/model.ts';
import { applyPlan, type ApplyResult } from '../../../src/reconcile/apply.ts';
import { planReconcile } from '../../../src/reconcile/engine.ts';
import type { BuiltReconcileContext } from '../../../src/reconcile/from-config.ts';
import { Ledger } from '../../../src/reconcile/ledger.ts';
import type { Plan } from '../../../src/reconcile/plan-types.ts';
import { applyDelta, DesiredCache, type AffectedSet } from '../../../src/reconcile/targeted/desired-cache.ts';
import { planTargeted } from '../../../src/reconcile/targeted/plan.ts';
import type { TargetedInput, TargetedOutcome } from '../../../src/reconcile/targeted/types.ts';
import type { SourceDelta } from '../../../src/sources/changes.ts';
import type { Simulator } from '../../../src/simulator/index.ts';
import type { Directory, Workspace } from '../../helpers/reconcile-harness.ts';

const rejectionId = (r: SourceRejection): string => JSON.stringify([r.kind, r.ref, r.externalId, r.userName, r.displayName, r.member]);

/** What changed from one complete read to the next, as a source's delta reports it (complete records). */
export function deltaBetween(before: DesiredState, after: DesiredState, cursor = 'c'): SourceDelta {
  const oldUsers = new Map(before.users.map((u) => [u.externalId, u]));
  const newUsers = new Map(after.users.map((u) => [u.externalId, u]));
  const oldGroups = new Map(before.groups.map((g) => [g.externalId, g]));
  const newGroups = new Map(after.groups.map((g) => [g.externalId, g]));
  const oldRejected = new Set(before.rejected.map(rejectionId));
  const present = (kind: 'user' | 'group', e: string): boolean =>
    (kind === 'user' ? newUsers.has(e) : newGroups.has(e)) || after.rejected.some((r) => r.externalId === e && r.member === undefined);
  const gone = (kind: 'user' | 'group', olds: Iterable<string>): string[] => {
    const ids = new Set(olds);
    // A rejected entry that was deleted from the directory is gone too.
    for (const r of before.rejected)
      if (r.externalId !== undefined && r.member === undefined && (r.kind === 'group') === (kind === 'group')) ids.add(r.externalId);
    return [...ids].filter((e) => !present(kind, e));
  };
  return {
    kind: 'delta',
    cursor,
    users: {
      upserted: after.users.filter((u) => !isDeepStrictEqual(oldUsers.get(u.externalId), u)),
      removed: gone('user', oldUsers.keys()),
    },
    groups: {
      upserted: after.groups.filter((g) => !isDeepStrictEqual(oldGroups.get(g.externalId), g)),
      removed: gone('group', oldGroups.keys()),
    },
    rejected: after.rejected.filter((r) => !oldRejected.has(rejectionId(r))),
    changedAt: {},
  };
}

export interface ChangePath {
  cache: DesiredCache;
  /** Managed objects at the last full reconcile (the guard's base). */
  managed: number;
}

/** A full plan + apply in process (the periodic full reconcile); returns the plan and refreshes the cache. */
export async function fullReconcile(
  ctx: BuiltReconcileContext,
  path?: ChangePath,
): Promise<{ plan: Plan; result: ApplyResult; path: ChangePath }> {
  const planned = await planReconcile(ctx, { allowDeletes: false });
  const result = await applyPlan(
    planned.plan,
    { target: ctx.target, ledger: planned.ledger, ledgerStore: ctx.ledgerStore, attributes: ctx.attributes },
    { concurrency: 4, requestsPerSecond: 0, adoptExisting: ctx.config.matching.adoptExisting },
  );
  const desired = await ctx.source.read();
  const next: ChangePath = path ?? { cache: DesiredCache.from(desired), managed: 0 };
  if (path !== undefined) next.cache = DesiredCache.from(desired);
  const ledger = await Ledger.load(ctx.ledgerStore);
  next.managed = ledger.count('user') + ledger.count('group');
  return { plan: planned.plan, result, path: next };
}

/** Writes the directory and turns the edit into a delta applied to the cache. */
export async function edit(
  ws: Workspace,
  ctx: BuiltReconcileContext,
  path: ChangePath,
  dir: Directory,
): Promise<{ delta: SourceDelta; affected: AffectedSet }> {
  const before = path.cache.state;
  const snapshot: DesiredState = { ...before, users: [...before.users], groups: [...before.groups], rejected: [...before.rejected] };
  ws.writeDirectory(dir);
  const after = await ctx.source.read();
  const delta = deltaBetween(snapshot, after);
  return { delta, affected: applyDelta(path.cache, delta) };
}

export async function targeted(
  ctx: BuiltReconcileContext,
  path: ChangePath,
  affected: AffectedSet,
  opts: Partial<Pick<TargetedInput, 'maxGroupMembers' | 'maxIdentities'>> = {},
): Promise<{ outcome: TargetedOutcome; ledger: Ledger }> {
  const ledger = await Ledger.load(ctx.ledgerStore);
  const outcome = await planTargeted({
    ...opts,
    tenant: ctx.tenant,
    source: ctx.source.describe,
    config: ctx.config,
    target: ctx.target,
    attributes: ctx.attributes,
    ledger,
    desired: path.cache.state,
    affected,
    managedAtLastFull: path.managed,
    allowDeletes: false,
    now: Date.now(),
  });
  return { outcome, ledger };
}

export function planOf(outcome: TargetedOutcome): Plan {
  if (outcome.kind !== 'plan') throw new Error(`deferred: ${outcome.reason}: ${outcome.detail}`);
  return outcome.plan;
}

export async function applyTargeted(ctx: BuiltReconcileContext, plan: Plan, ledger: Ledger): Promise<ApplyResult> {
  const result = await applyPlan(
    plan,
    { target: ctx.target, ledger, ledgerStore: ctx.ledgerStore, attributes: ctx.attributes },
    { concurrency: 4, requestsPerSecond: 0, adoptExisting: ctx.config.matching.adoptExisting },
  );
  expect(result.failed).toEqual([]);
  return result;
}

/** Platform requests (SCIM resources only) sent while `run` ran. */
export async function counted<T>(sim: Simulator, run: () => Promise<T>): Promise<{ value: T; requests: Simulator['requests'] }> {
  const from = sim.requests.length;
  const value = await run();
  return { value, requests: sim.requests.slice(from).filter((r) => /\/(Users|Groups)/.test(r.path)) };
}

/** Requests that page through a whole collection (no filter): a targeted run sends none. */
export function fullListings(requests: Simulator['requests']): string[] {
  return requests
    .filter((r) => r.method === 'GET' && /\/(Users|Groups)$/.test(r.path) && r.query['filter'] === undefined)
    .map((r) => r.path);
}
