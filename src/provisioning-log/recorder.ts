/**
 * The in-process subscriber (one-shot `apply`): `planned(plan)` indexes the plan's tasks and
 * writes what the guard held; `onChange` is the engine's `onChange` callback (synchronous),
 * buffered and flushed in batches; `finish()` flushes and applies retention. A failing store
 * never stops the apply: the failure is logged once per flush and the change lines of the
 * structured log still tell what happened.
 */
import type { Logger } from '../observability/logger.ts';
import type { Plan } from '../reconcile/plan-types.ts';
import { planPhases, type AppliedChange, type ApplyTask } from '../reconcile/tasks.ts';
import { heldRecords, planDetails, plannedActions, recordOf, taskKey, type NewRecord, type TaskDetail } from './record.ts';
import type { ProvisioningLogStore } from './store.ts';
import { conflictRecords } from './identity.ts';

const FLUSH_EVERY = 200;

export class ProvisioningLogRecorder {
  private tasks = new Map<string, ApplyTask>();
  private details = new Map<string, TaskDetail>();
  private buffer: NewRecord[] = [];
  private writing: Promise<void> = Promise.resolve();
  readonly store: ProvisioningLogStore;
  readonly runId: string;
  private readonly tenant: string;
  private readonly logger: Logger;
  private readonly now: () => number;

  constructor(store: ProvisioningLogStore, tenant: string, runId: string, logger: Logger, now: () => number = Date.now) {
    this.store = store;
    this.tenant = tenant;
    this.runId = runId;
    this.logger = logger;
    this.now = now;
  }

  /** Call once with the plan about to be applied. */
  planned(plan: Plan): void {
    // planPhases leaves held removals out; index the full plan so every change finds its task.
    const all = planPhases({ ...plan, guard: { ...plan.guard, tripped: false } });
    for (const phase of all) for (const t of phase.tasks) this.tasks.set(taskKey(t.action, t.externalId), t);
    this.details = planDetails(plan);
    this.buffer.push(...heldRecords(this.tenant, this.runId, plan, this.now()));
    this.buffer.push(...conflictRecords(this.tenant, this.runId, plan, this.now()));
  }

  readonly onChange = (change: AppliedChange): void => {
    let task: ApplyTask | undefined;
    let detail: TaskDetail | undefined;
    for (const a of plannedActions(change.action)) {
      const k = taskKey(a, change.externalId);
      task ??= this.tasks.get(k);
      detail ??= this.details.get(k);
    }
    this.buffer.push(recordOf(this.tenant, this.runId, change, task, detail, this.now()));
    if (this.buffer.length >= FLUSH_EVERY) void this.flush();
  };

  flush(): Promise<void> {
    const batch = this.buffer.splice(0);
    if (batch.length === 0) return this.writing;
    this.writing = this.writing.then(() =>
      this.store.append(batch).catch((e: unknown) => {
        this.logger.warn(
          { err: e instanceof Error ? e.message : String(e), records: batch.length, store: this.store.describe },
          'provisioning log: records not written',
        );
      }),
    );
    return this.writing;
  }

  async finish(): Promise<void> {
    await this.flush();
    await this.store
      .trim()
      .catch((e: unknown) =>
        this.logger.warn({ err: e instanceof Error ? e.message : String(e) }, 'provisioning log: retention not applied'),
      );
  }
}
