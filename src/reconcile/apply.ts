/**
 * Executes a plan with bounded concurrency and an optional requests-per-second cap, in the
 * order users created/updated → groups created/updated → memberships → groups deleted →
 * users deactivated/deleted. One failed object is recorded with its reason and never stops
 * the others; only a fatal error (bad credential) aborts what is left.
 */
import PQueue from 'p-queue';
import { isSyncError } from '../errors.ts';
import type { Ledger, LedgerStore } from './ledger.ts';
import type { Plan } from './plan-types.ts';
import type { ScimTarget } from './target.ts';
import type { UserAttributeTarget } from '../platform/user-attributes.ts';
import { countTasks, executeTask, isPartialTaskError, planPhases, type AppliedChange, type ApplyTask, type ChangeAction } from './tasks.ts';

export type { AppliedChange, ChangeAction } from './tasks.ts';

export interface ApplyFailure {
  action: ChangeAction;
  ref: string;
  code: string;
  message: string;
}

export interface ApplyProgress {
  phase: string;
  done: number;
  total: number;
  failed: number;
}

export interface ApplyOptions {
  concurrency: number;
  /** provisioning.matching.adoptExisting (a create meeting an unmanaged object takes it over only then). */
  adoptExisting: boolean;
  requestsPerSecond: number;
  signal?: AbortSignal;
  now?: () => number;
  onProgress?: (p: ApplyProgress) => void;
  /** One call per applied change: the sync's own audit trail. */
  onChange?: (c: AppliedChange) => void;
}

export interface ApplyResult {
  succeeded: Partial<Record<ChangeAction, number>>;
  membersAdded: number;
  membersRemoved: number;
  failed: ApplyFailure[];
  /** Destructive operations not run because the guard tripped. */
  held: {
    usersDeactivate: number;
    usersDelete: number;
    groupsDelete: number;
    membersRemove: number;
    attributeTakeAways?: number;
  };
  /** Set when a fatal error stopped the run early. */
  aborted?: string;
  durationMs: number;
}

export interface ApplyDeps {
  target: ScimTarget;
  ledger: Ledger;
  ledgerStore: LedgerStore;
  /** The user-attribute API, when user attributes are configured. */
  attributes?: UserAttributeTarget | undefined;
}

/** Queued tasks per unit of concurrency before the phase waits for the queue to drain. */
const BACKLOG = 4;

export async function applyPlan(plan: Plan, deps: ApplyDeps, opts: ApplyOptions): Promise<ApplyResult> {
  const started = performance.now();
  const now = opts.now ?? Date.now;
  const { target, ledger } = deps;
  const held = plan.guard.tripped;
  const result: ApplyResult = {
    succeeded: {},
    membersAdded: 0,
    membersRemoved: 0,
    failed: [],
    held: held
      ? {
          usersDeactivate: plan.users.deactivate.length,
          usersDelete: plan.users.delete.length,
          groupsDelete: plan.groups.delete.length,
          membersRemove: plan.summary.membersRemove,
          ...(plan.attributes ? { attributeTakeAways: plan.attributes.summary.takeAways } : {}),
        }
      : { usersDeactivate: 0, usersDelete: 0, groupsDelete: 0, membersRemove: 0 },
    durationMs: 0,
  };
  const queue = new PQueue({
    concurrency: opts.concurrency,
    ...(opts.requestsPerSecond > 0 ? { intervalCap: Math.max(1, Math.floor(opts.requestsPerSecond)), interval: 1000 } : {}),
  });
  const phases = planPhases(plan);
  const progress: ApplyProgress = { phase: 'start', done: 0, total: countTasks(phases), failed: 0 };
  const report = (): void => opts.onProgress?.({ ...progress });

  const execute = (task: ApplyTask): void => {
    void queue.add(async () => {
      if (result.aborted !== undefined || opts.signal?.aborted) return;
      try {
        const change = await executeTask(task, { target, ledger, now, adoptExisting: opts.adoptExisting, attributes: deps.attributes });
        result.succeeded[change.action] = (result.succeeded[change.action] ?? 0) + 1;
        result.membersAdded += change.added ?? 0;
        result.membersRemoved += change.removed ?? 0;
        opts.onChange?.({ ...change, result: 'ok' });
      } catch (e) {
        // Part of the task was done (e.g. a member PATCH before some members proved missing): count it.
        if (isPartialTaskError(e)) {
          result.membersAdded += e.applied.added ?? 0;
          result.membersRemoved += e.applied.removed ?? 0;
        }
        const code = isSyncError(e) ? e.code : 'E_UNEXPECTED';
        const message = e instanceof Error ? e.message : String(e);
        result.failed.push({ action: task.action, ref: task.name, code, message });
        progress.failed++;
        const done = isPartialTaskError(e)
          ? { id: e.applied.id, added: e.applied.added, removed: e.applied.removed }
          : 'id' in task && task.id
            ? { id: task.id }
            : {};
        opts.onChange?.({ action: task.action, result: 'failed', ...done, externalId: task.externalId, name: task.name, code, message });
        if (isSyncError(e) && e.kind === 'fatal') {
          result.aborted = message;
          queue.clear();
        }
      } finally {
        progress.done++;
        report();
      }
    });
  };

  try {
    // Write-ahead: creates are pending before they are sent, so a crash cannot orphan them.
    for (const c of plan.users.create) ledger.markPending('user', c.externalId);
    for (const c of plan.groups.create) ledger.markPending('group', c.externalId);
    if (ledger.isDirty) await ledger.save(deps.ledgerStore);
    for (const phase of phases) {
      if (result.aborted !== undefined || opts.signal?.aborted) break;
      progress.phase = phase.name;
      report();
      // Write-ahead, like pending creates: the deactivation times are saved before any
      // PATCH, so a crash in the middle of the phase cannot lose the grace period.
      if (stampDeactivations(phase.tasks, ledger, now())) await ledger.save(deps.ledgerStore);
      for (const task of phase.tasks) {
        // Only a few tasks wait in the queue at a time: a closure and a promise per queued task
        // for a whole phase (100,000 creates) would be the largest thing an apply holds.
        if (queue.size >= BACKLOG * opts.concurrency) await queue.onSizeLessThan(opts.concurrency);
        if (result.aborted !== undefined || opts.signal?.aborted) break;
        execute(task);
      }
      await queue.onIdle();
      if (ledger.isDirty) await ledger.save(deps.ledgerStore);
    }
  } finally {
    await queue.onIdle();
    if (ledger.isDirty) await ledger.save(deps.ledgerStore);
    result.durationMs = performance.now() - started;
  }
  return result;
}

/** Records the time of every deactivation of `tasks` in the ledger; true if there was one. */
function stampDeactivations(tasks: ApplyTask[], ledger: Ledger, at: number): boolean {
  let any = false;
  for (const t of tasks) {
    if (t.action !== 'user.deactivate') continue;
    if (!ledger.has('user', t.id)) ledger.record('user', t.id, t.externalId);
    ledger.setDeactivated(t.id, at);
    any = true;
  }
  return any;
}
