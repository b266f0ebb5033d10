/**
 * The change path end to end, for the targeted scenarios and the change model: a directory
 * edit becomes a source delta (the file source's change feed, sources/file/file-changes.ts),
 * the delta updates the desired cache, the targeted planner plans the affected identities
 * against the simulator, and the plan is applied with the real executor.
 */
import { expect } from 'vitest';
import { applyPlan, type ApplyResult } from '../../../src/reconcile/apply.ts';
import { planReconcile } from '../../../src/reconcile/engine.ts';
import type { BuiltReconcileContext } from '../../../src/reconcile/from-config.ts';
import { Ledger } from '../../../src/reconcile/ledger.ts';
import type { Plan } from '../../../src/reconcile/plan-types.ts';
import { applyDelta, DesiredCache, type AffectedSet } from '../../../src/reconcile/targeted/desired-cache.ts';
import { planTargeted } from '../../../src/reconcile/targeted/plan.ts';
import type { TargetedInput, TargetedOutcome } from '../../../src/reconcile/targeted/types.ts';
import { supportsChanges, type ChangeSource, type SourceDelta } from '../../../src/sources/changes.ts';
import type { Simulator } from '../../../src/simulator/index.ts';
import { createWorkspace, startSim, type DirUser, type Directory, type Workspace } from '../../helpers/reconcile-harness.ts';
import { user } from '../lifecycle/support.ts';

const STAFF: Array<[id: string, email: string]> = [
  ['e-1', 'ana@example.com'],
  ['e-2', 'ben@example.com'],
  ['e-3', 'cy@example.com'],
  ['e-4', 'dee@example.com'],
  ['e-5', 'eve@example.com'],
];

/** The first `count` (at most five) of the staff the targeted scenes start from, e-1 ana … e-5 eve. */
export const teamStaff = (count: number): DirUser[] => STAFF.slice(0, count).map(([id, email]) => user(id, email));

/** `list` with two groups, Engineering and Sales, of the given members. */
export function teamDirectory(list: DirUser[], eng: string[], sales: string[]): Directory {
  return {
    users: list,
    groups: [
      { externalId: 'g-eng', displayName: 'Engineering', members: eng },
      { externalId: 'g-sales', displayName: 'Sales', members: sales },
    ],
  };
}

export interface ChangePath {
  cache: DesiredCache;
  /** The source's change cursor (sources/changes.ts). */
  cursor: string;
  /** Managed objects at the last full reconcile (the guard's base). */
  managed: number;
}

/** One scene on the change path: the simulator, a workspace and its context, the cache of the last full read. */
export interface Scene {
  sim: Simulator;
  ws: Workspace;
  ctx: BuiltReconcileContext;
  path: ChangePath;
}

/** Starts a scene over the workspace options' directory, after one full reconcile (the state the change path starts from). */
export async function openScene(opts: Parameters<typeof createWorkspace>[1]): Promise<Scene> {
  const sim = await startSim();
  const ws = createWorkspace(sim, opts);
  const ctx = await ws.context();
  const path = (await fullReconcile(ctx)).path;
  return { sim, ws, ctx, path };
}

export async function closeScene(scene: Pick<Scene, 'sim' | 'ctx'>): Promise<void> {
  await scene.ctx.close();
  await scene.sim.close();
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
  // The change feed starts with a full read (no cursor) that becomes the cache.
  const first = await changeSource(ctx).changes(undefined);
  if (first.kind !== 'full') throw new Error('a change feed without a cursor answers with a full read');
  const next: ChangePath = path ?? { cache: DesiredCache.from(first.state), cursor: first.cursor, managed: 0 };
  next.cache = DesiredCache.from(first.state);
  next.cursor = first.cursor;
  const ledger = await Ledger.load(ctx.ledgerStore);
  next.managed = ledger.count('user') + ledger.count('group');
  return { plan: planned.plan, result, path: next };
}

export function changeSource(ctx: BuiltReconcileContext): ChangeSource {
  if (!supportsChanges(ctx.source)) throw new Error(`${ctx.source.describe} reports no changes`);
  return ctx.source;
}

/** Writes the directory; the source's change feed reports the edit as a delta, applied to the cache. */
export async function edit(
  ws: Workspace,
  ctx: BuiltReconcileContext,
  path: ChangePath,
  dir: Directory,
): Promise<{ delta: SourceDelta; affected: AffectedSet }> {
  ws.writeDirectory(dir);
  const answer = await changeSource(ctx).changes(path.cursor);
  if (answer.kind !== 'delta') throw new Error(`the source answered with a full read: ${answer.reason}`);
  path.cursor = answer.cursor;
  return { delta: answer, affected: applyDelta(path.cache, answer) };
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
