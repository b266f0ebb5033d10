/**
 * The change model: the reconcile model's source edits (joiners, leavers disabled or deleted,
 * renames, attribute changes, group moves, recycled userNames, typos, an admin's edits) flow
 * through the change path — a source delta, the desired cache, a targeted plan, the real
 * executor — against the simulator over a socket. Notifications are dropped, duplicated and
 * reordered at random, and full reconciles run at random points and whenever a targeted run
 * defers. Checked:
 *
 * - a targeted plan never writes what a full plan would not: each of its writes is a write of
 *   the full plan built from a full listing of the same platform and the same desired state
 *   (the guard set aside: it judges a whole plan);
 * - while the cache agrees with the source, a targeted plan keeps the model's promises (no
 *   admin account written, no handover, nobody present deprovisioned or removed from a group);
 * - after a targeted apply, the full plan has nothing left for the changed identities;
 * - every full reconcile keeps all the promises of the reconcile model (model/system.ts), and
 *   after the last one the platform equals the desired state, whatever the notifications did.
 */
import fc from 'fast-check';
import { isDeepStrictEqual } from 'node:util';
import type { DesiredState } from '../../../src/identity/model.ts';
import { applyPlan } from '../../../src/reconcile/apply.ts';
import { planReconcile } from '../../../src/reconcile/engine.ts';
import type { BuiltReconcileContext } from '../../../src/reconcile/from-config.ts';
import { Ledger } from '../../../src/reconcile/ledger.ts';
import type { Plan } from '../../../src/reconcile/plan-types.ts';
import { applyDelta, DesiredCache, type AffectedSet } from '../../../src/reconcile/targeted/desired-cache.ts';
import { planTargeted } from '../../../src/reconcile/targeted/plan.ts';
import type { SourceDelta } from '../../../src/sources/changes.ts';
import type { ServerQuirk } from '../../../src/simulator/index.ts';
import { allSteps, initialModel, type Edit } from '../model/commands.ts';
import type { DirectoryModel } from '../model/directory-model.ts';
import { MODEL_QUIRKS, startModelWorld } from '../model/run-model.ts';
import { ModelViolation, type RealSystem } from '../model/system.ts';
import { notIn, planOps } from './plan-ops.ts';
import { deltaBetween } from './support.ts';

/** What happens to one change notification on its way to the daemon. */
export type Notification = 'deliver' | 'drop' | 'duplicate' | 'hold';

/**
 * Steps that are not source changes a daemon is told about in this form: an outage is a
 * failed read, not a delta; a listing churn needs a full listing to happen in.
 */
const NOT_CHANGES = new Set(['SourceOutage', 'ChurnBetweenPages']);

/**
 * Servers whose `eq` is case-exact are left out: there a holder of a name spelled in another
 * mixed case is found only by a full listing (docs/reconcile.md, "Targeted reconcile").
 */
const CHANGE_QUIRKS: ServerQuirk[] = MODEL_QUIRKS.filter((q) => q !== 'case-sensitive-eq');

export interface ChangeModelOptions {
  ownership: 'ledger' | 'externalId';
  deprovision?: 'deactivate' | 'delete';
  seed: number;
  numRuns: number;
  maxCommands: number;
}

/** Counts over a whole property run, to show the targeted path was taken (not deferred every time). */
export interface ChangeModelStats {
  targeted: number;
  deferred: Record<string, number>;
  writes: number;
}

function violation(msg: string, model: DirectoryModel, plan?: Plan): never {
  throw new ModelViolation(`${msg}\nmodel: ${model.describe()}${plan ? `\nplan: ${JSON.stringify(plan.summary)}` : ''}`);
}

const sortedJson = (list: unknown[]): string[] => list.map((x) => JSON.stringify(x)).sort();

function sameState(a: DesiredState, b: DesiredState): boolean {
  const groups = (s: DesiredState): string[] => sortedJson(s.groups.map((g) => ({ ...g, members: [...g.members].sort() })));
  return (
    isDeepStrictEqual(sortedJson(a.users), sortedJson(b.users)) &&
    isDeepStrictEqual(groups(a), groups(b)) &&
    isDeepStrictEqual(sortedJson(a.rejected), sortedJson(b.rejected))
  );
}

export class ChangeSystem {
  readonly real: RealSystem;
  readonly ctx: BuiltReconcileContext;
  readonly stats: ChangeModelStats;
  private cache!: DesiredCache;
  /** The source's last complete read: deltas are taken against it. */
  private lastRead!: DesiredState;
  /** Notifications held back, delivered after the next one (reordered). */
  private held: SourceDelta[] = [];

  constructor(real: RealSystem, ctx: BuiltReconcileContext, stats: ChangeModelStats) {
    this.real = real;
    this.ctx = ctx;
    this.stats = stats;
  }

  /** The periodic full reconcile (with every promise of the reconcile model checked); the cache is replaced by its read. */
  async full(model: DirectoryModel): Promise<void> {
    await this.real.sync(model);
    this.lastRead = await this.ctx.source.read();
    this.cache = DesiredCache.from(this.lastRead);
    this.held = [];
  }

  /** One source edit, its notification as `notification` says, and a targeted run per delivered change. */
  async change(model: DirectoryModel, edit: Edit, notification: Notification, fullAfter: boolean): Promise<void> {
    edit.apply(model, this.real);
    this.real.ws.writeDirectory(model.toDirectory());
    const read = await this.ctx.source.read();
    const delta = deltaBetween(this.lastRead, read);
    this.lastRead = read;
    const deliveries: SourceDelta[] = notification === 'deliver' ? [delta] : notification === 'duplicate' ? [delta, delta] : [];
    deliveries.push(...this.held);
    this.held = notification === 'hold' ? [delta] : [];
    for (const d of deliveries) {
      const deferred = await this.targeted(model, applyDelta(this.cache, d));
      if (deferred) return this.full(model);
    }
    if (fullAfter) await this.full(model);
  }

  /** Managed objects on the platform (the base a full plan's guard takes). */
  private managed(ledger: Ledger): number {
    const mode = this.ctx.config.ownership.mode;
    const store = this.real.sim.store;
    const users = store.users().filter((u) => ledger.has('user', u.id) || (mode === 'externalId' && !!u.externalId)).length;
    const groups = store.groups().filter((g) => ledger.has('group', g.id) || (mode === 'externalId' && !!g.externalId)).length;
    return users + groups;
  }

  /** A full plan from a full listing and the cached desired state; the guard set aside. */
  private async fullPlan(): Promise<Plan> {
    const desired = this.cache.state;
    const source = { describe: this.ctx.source.describe, read: async () => desired, check: async () => 'cache' };
    return (await planReconcile({ ...this.ctx, source }, { allowDeletes: true })).plan;
  }

  /** Returns true when the run deferred. */
  private async targeted(model: DirectoryModel, affected: AffectedSet): Promise<boolean> {
    const ledger = await Ledger.load(this.ctx.ledgerStore);
    const before = this.real.snapshot();
    const outcome = await planTargeted({
      tenant: this.ctx.tenant,
      source: this.ctx.source.describe,
      config: this.ctx.config,
      target: this.ctx.target,
      ledger,
      desired: this.cache.state,
      affected,
      managedAtLastFull: this.managed(ledger),
      allowDeletes: false,
      now: Date.now(),
    });
    if (outcome.kind === 'defer') {
      this.stats.deferred[outcome.reason] = (this.stats.deferred[outcome.reason] ?? 0) + 1;
      return true;
    }
    this.stats.targeted++;
    const plan = outcome.plan;
    const full = await this.fullPlan();
    const extra = notIn(plan, full);
    if (extra.length > 0)
      violation(
        `the targeted plan writes what the full plan does not (affected ${JSON.stringify(affected)}):\n  ${extra.join('\n  ')}\nfull plan:\n  ${planOps(
          full,
        )
          .map((o) => o.key)
          .join('\n  ')}`,
        model,
        plan,
      );
    if (sameState(this.cache.state, this.lastRead)) this.real.checkPlan(model, before, plan);
    const result = await applyPlan(
      plan,
      { target: this.ctx.target, ledger, ledgerStore: this.ctx.ledgerStore },
      { concurrency: 4, requestsPerSecond: 0, adoptExisting: this.ctx.config.matching.adoptExisting },
    );
    if (result.failed.length > 0) violation(`the targeted apply failed: ${JSON.stringify(result.failed)}`, model, plan);
    this.stats.writes += plan.summary.changes;
    this.real.remember(this.real.snapshot());
    // Nothing left for the changed identities.
    const again = await this.fullPlan();
    const users = new Set(affected.users);
    const groups = new Set(affected.groups);
    const planned = new Set(outcome.neighbourhood.groups);
    // A changed user's account; a changed group and all of its memberships; a changed user's membership in a group read.
    const left = planOps(again).filter((o) =>
      o.groups.length === 0
        ? o.users.some((u) => users.has(u))
        : o.groups.some((g) => groups.has(g)) || (o.groups.some((g) => planned.has(g)) && o.users.some((u) => users.has(u))),
    );
    if (left.length > 0)
      violation(
        `after the targeted apply the full plan still changes the affected identities:\n  ${left.map((o) => o.key).join('\n  ')}`,
        model,
        plan,
      );
    return false;
  }
}

type ChangeCommand = fc.AsyncCommand<DirectoryModel, ChangeSystem>;

/**
 * How often each step is drawn, relative to the others (default 1): the edits whose targeted
 * plan depends on objects other than the changed one's own (a name held by a leaver or an
 * admin, a membership) come often enough to meet each other within a short sequence.
 */
const WEIGHTS: Record<string, number> = { Joiner: 4, Leaver: 3, Recycle: 2, Returner: 2, Rename: 2, Mover: 2, AdminCreate: 2 };

const changeArbitraries: fc.Arbitrary<ChangeCommand>[] = allSteps
  .filter(([name]) => !NOT_CHANGES.has(name))
  .flatMap(([name, arb]) => Array.from({ length: WEIGHTS[name] ?? 1 }, () => arb))
  .map((arb) =>
    fc
      .tuple(
        arb,
        fc.constantFrom<Notification>('deliver', 'deliver', 'deliver', 'drop', 'duplicate', 'hold'),
        fc.integer({ min: 0, max: 4 }),
      )
      .map(
        ([s, notification, f]): ChangeCommand => ({
          check: () => true,
          run: (m, sys) => sys.change(m, s.edit, notification, f === 0),
          toString: () => `${s.edit.label}/${notification}${f === 0 ? '/full' : ''}`,
        }),
      ),
  );

export async function runChangeModel(opts: ChangeModelOptions): Promise<ChangeModelStats> {
  const stats: ChangeModelStats = { targeted: 0, deferred: {}, writes: 0 };
  await fc.assert(
    fc.asyncProperty(
      fc.commands(changeArbitraries, { maxCommands: opts.maxCommands }),
      fc.integer({ min: 1, max: 4 }),
      fc.subarray(CHANGE_QUIRKS),
      async (commands, pageSize, quirks) => {
        const model = initialModel();
        const { sim, ws, real } = await startModelWorld(opts, pageSize, quirks, model);
        const ctx = await ws.context();
        try {
          const sys = new ChangeSystem(real, ctx, stats);
          await sys.full(model);
          await fc.asyncModelRun(() => ({ model, real: sys }), commands);
          // Whatever the notifications did: the next full reconcile converges (checked by sync).
          await sys.full(model);
        } finally {
          await ctx.close();
          await sim.close();
        }
      },
    ),
    { seed: opts.seed, numRuns: opts.numRuns },
  );
  return stats;
}
