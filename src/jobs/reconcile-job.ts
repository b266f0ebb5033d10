/**
 * The reconcile job of one tenant: quarantine check → lease (with a fencing token) → plan
 * (the same engine as the CLI) → fan the apply out phase by phase → record the run.
 * Destructive work held by the guard stays held (visible in /status) until `approve-deletes`;
 * the rest is applied. Nothing is written (ledger, approval, phases) unless the lease still
 * carries this run's token; a lost lease aborts the run, which ends as `lease_lost`.
 */
import { ownershipCounts } from '../reconcile/ownership.ts';
import { randomUUID } from 'node:crypto';
import { DelayedError, UnrecoverableError, type FlowProducer, type Job, type Queue, type QueueEvents } from 'bullmq';
import { ErrorCodes, isSyncError } from '../errors.ts';
import type { Logger } from '../observability/logger.ts';
import { recordPlan, recordRun, setManagedObjects, setQuarantined } from '../observability/instrument.ts';
import { planReconcile } from '../reconcile/engine.ts';
import type { RunResult } from '../reconcile/metrics.ts';
import type { ApplyFailure } from '../reconcile/apply.ts';
import { planPhases } from '../reconcile/tasks.ts';
import { DaemonProvisioningLog } from '../provisioning-log/daemon.ts';
import { createSource, sourceContext } from '../sources/registry.ts';
import { runPhaseFannedOut, type FanOutDeps } from './apply-job.ts';
import type { RunLease } from './lease.ts';
import { RedisBurstStore } from './change-state.ts';
import { enforceBurstHold } from '../reconcile/changes/burst-guard.ts';
import type { Ledger } from '../reconcile/ledger.ts';
import type { Plan } from '../reconcile/plan-types.ts';
import type { RedisClient } from './redis.ts';
import { tenantKeys } from './keys.ts';
import { runJobSpanAttributes, runRecorder, runSpanAttributes, type RunRecord } from './tenant-state.ts';
import { withSpan } from '../observability/tracing/spans.ts';
import type { TenantRuntime } from './tenant-runtime.ts';

export interface ReconcileJobData {
  tenant: string;
  /** `changes`: requested by the change stream (a change it left to a full reconcile). */
  trigger: 'schedule' | 'manual' | 'approval' | 'changes';
}

export interface ReconcileJobDeps {
  redis: RedisClient;
  keyPrefix: string;
  tenants: Map<string, TenantRuntime>;
  flow: FlowProducer;
  applyEvents: QueueEvents;
  applyQueue: Queue;
  logger: Logger;
  /** Aborted when the daemon abandons running jobs at shutdown. */
  signal?: AbortSignal;
}

/** Errors only an operator can fix: never retried (no retry storm). */
const UNRECOVERABLE = new Set<string>([
  ErrorCodes.CONFIG_INVALID,
  ErrorCodes.AUTH_INVALID,
  ErrorCodes.AUTH_FORBIDDEN,
  ErrorCodes.INSECURE_URL,
]);

/** One reconcile run, the root of its own trace (source read, listing, plan, apply phases and chunks below). */
export function processReconcile(job: Job<ReconcileJobData>, deps: ReconcileJobDeps, token?: string): Promise<RunRecord> {
  return withSpan(
    'reconcile run',
    runJobSpanAttributes(job),
    async (span) => {
      const r = await reconcileRun(job, deps, token, span.traceId);
      span.set(runSpanAttributes(r));
      return r;
    },
    // Waiting for a running reconcile of the tenant is not a failure of this one.
    { root: true, expected: (e) => (e instanceof DelayedError ? 'delayed' : undefined) },
  );
}

async function reconcileRun(
  job: Job<ReconcileJobData>,
  deps: ReconcileJobDeps,
  token: string | undefined,
  traceId: string,
): Promise<RunRecord> {
  const { tenant } = job.data;
  const rt = deps.tenants.get(tenant);
  if (!rt) throw new UnrecoverableError(`tenant ${tenant} is not configured`);
  const cfg = rt.loaded.config;
  const logger = deps.logger.child({ tenant, jobId: job.id });
  const started = Date.now();
  const runId = `${started.toString(36)}-${randomUUID().slice(0, 8)}`;
  const record = runRecorder(runId, 'reconcile', started, traceId);

  const q = await rt.state.quarantine();
  setQuarantined(tenant, q.quarantined);
  if (q.quarantined && Date.now() < q.until && (job.data.trigger === 'schedule' || job.data.trigger === 'changes')) {
    const r = record('quarantined', { until: new Date(q.until).toISOString(), reason: q.reason });
    recordRun(tenant, 'reconcile', 'quarantined', 0, logger, r.detail);
    return r;
  }
  // Owned by the job: if this attempt is the job recovered from a stalled or dead replica, the
  // lease is ours, under a new token that fences the earlier attempt out. It lives as long as
  // a job lock: a stall that costs the lock costs the lease too.
  const lockMs = cfg.daemon.jobLockSeconds * 1000;
  const lease = await rt.state.acquireLease('reconcile', `job:${String(job.id)}`, lockMs);
  if (!lease) {
    // An operator's run (trigger, resume, approve-deletes) must not be lost to a running
    // scheduled one: it waits and runs afterwards. A scheduled tick is simply skipped.
    if (job.data.trigger !== 'schedule' && token !== undefined) {
      // Try again after half a job lock: a holder that died has lost its lease by then.
      const retryInMs = Math.min(15_000, cfg.daemon.jobLockSeconds * 500);
      logger.info({ retryInMs }, 'another reconcile of this tenant is running; this run waits for it');
      await job.moveToDelayed(Date.now() + retryInMs, token);
      throw new DelayedError();
    }
    const r = record('skipped', { reason: 'another reconcile of this tenant is running' });
    recordRun(tenant, 'reconcile', 'skipped', 0, logger, r.detail);
    return r;
  }
  const source = await createSource(cfg.provisioning!.source, sourceContext(rt.loaded, logger));
  const signal = deps.signal ? AbortSignal.any([deps.signal, lease.signal]) : lease.signal;
  try {
    // An approval releases only a plan no larger than the one that was held (guard.ts).
    const approval = await rt.state.approval();
    const planned = await planReconcile(
      // The plan phase reads through a read-only view (non-GET → E_READ_ONLY); apply chunks use rt.scim.
      {
        tenant,
        config: cfg.provisioning!,
        source,
        target: rt.scim.readOnly(),
        ledgerStore: rt.ledger,
        attributes: rt.attributes?.readOnly(),
        signal,
      },
      { allowDeletes: false, approval },
    );
    const { plan, ledger } = planned;
    // Planning may have taken longer than the lease (a stalled event loop): a plan made under
    // a lost lease is never applied, and nothing below is written.
    await lease.assertHeld();
    // Destructive changes held by the change path's rolling-window guard stay held here too.
    const burst = new RedisBurstStore(deps.redis, deps.keyPrefix, tenant);
    const burstHold = await burst.hold();
    enforceBurstHold(plan, burstHold, approval);
    const approved = approval !== undefined && plan.guard.overridden;
    if (approval !== undefined) await rt.state.takeApproval();
    recordPlan(tenant, plan, logger);
    const provisioningLog = new DaemonProvisioningLog(deps.redis, deps.keyPrefix, rt);
    await provisioningLog.planned(runId, plan, logger);
    await writeAheadLedger(rt, plan, ledger);
    const held = plan.guard.tripped;
    await rt.state.setHeldDeletes(
      held
        ? {
            count: plan.guard.destructive,
            memberRemovals: plan.guard.memberRemovals,
            attributeClears: plan.guard.attributes?.attributeClears ?? 0,
            reasons: plan.guard.reasons,
            at: Date.now(),
            runId,
          }
        : undefined,
    );

    const d = cfg.daemon;
    const fanOut = {
      redis: deps.redis,
      keyPrefix: deps.keyPrefix,
      flow: deps.flow,
      events: deps.applyEvents,
      queue: deps.applyQueue,
      chunkSize: d.applyChunkSize,
      attempts: d.jobAttempts,
      timeoutMs: 6 * 3_600_000,
      pollMs: Math.min(5_000, Math.max(250, lockMs / 4)),
      fence: lease.fence,
      signal,
    };
    await runPhases(fanOut, tenant, runId, plan, lease, (phase) => job.updateProgress({ phase }));
    // Chunks stop when the lease is lost: their silence must not read as success.
    await lease.assertHeld();
    const summary = await collectRunResult(deps.redis, deps.keyPrefix, tenant, runId);
    const total = plan.summary.changes;
    const failRate = total > 0 ? (summary.failed.length / Math.max(1, total)) * 100 : 0;
    const badRun =
      summary.aborted !== undefined || (summary.failed.length >= d.quarantine.minOperations && failRate >= d.quarantine.failureRatePercent);
    // A user-attribute error (wrong-type definition, refused attribute API) makes the run partial.
    const attributeErrors = plan.attributes?.errors.length ?? 0;
    const result: RunResult = held
      ? 'guard_held'
      : summary.failed.length === 0 && attributeErrors === 0
        ? 'success'
        : badRun
          ? 'failed'
          : 'partial';
    if (!held && burstHold !== undefined) await burst.clear();
    const fresh = await rt.ledger.load();
    setManagedObjects(tenant, Object.keys(fresh?.users ?? {}).length, Object.keys(fresh?.groups ?? {}).length);
    const r = record(result, {
      summary: plan.summary,
      ownership: ownershipCounts(plan),
      succeeded: summary.succeeded,
      failed: summary.failed.length,
      firstFailures: summary.failed.slice(0, 5),
      held: held ? plan.guard.reasons : [],
      approvedDeletes: approved,
      ...(attributeErrors > 0 ? { attributeErrors: plan.attributes?.errors } : {}),
    });
    recordRun(tenant, 'reconcile', result, r.durationMs / 1000, logger, { runId, failed: summary.failed.length });
    await provisioningLog.deliver(logger, deps.signal);
    await rt.state.pushHistory(r, d.historyLength);
    if (badRun) {
      const qs = await rt.state.recordFailure(summary.aborted ?? `${summary.failed.length} of ${total} operations failed`, d.quarantine);
      setQuarantined(tenant, qs.quarantined);
    } else {
      await rt.state.clearQuarantine();
      setQuarantined(tenant, false);
    }
    return r;
  } catch (e) {
    // Abandoned at shutdown: not a failed run; the job is recovered as stalled and runs again.
    if (deps.signal?.aborted) throw e;
    // Lost lease: the error itself, or whatever the aborted planning threw (vanished jobs,
    // the more specific error, are reported as such).
    const lost =
      isSyncError(e) && e.code === ErrorCodes.LEASE_LOST
        ? e
        : lease.signal.aborted && !(isSyncError(e) && e.code === ErrorCodes.JOBS_VANISHED)
          ? (lease.signal.reason as Error)
          : undefined;
    if (lost) {
      // Not the tenant's fault: no quarantine. The job is retried, or already runs elsewhere.
      const r = record('lease_lost', { code: ErrorCodes.LEASE_LOST, message: lost.message, fence: lease.fence });
      recordRun(tenant, 'reconcile', 'lease_lost', r.durationMs / 1000, logger, { runId, code: ErrorCodes.LEASE_LOST, err: lost.message });
      await rt.state.pushHistory(r, cfg.daemon.historyLength).catch(() => undefined);
      throw lost;
    }
    const code = isSyncError(e) ? e.code : 'E_UNEXPECTED';
    const message = e instanceof Error ? e.message : String(e);
    const unrecoverable = isSyncError(e) && UNRECOVERABLE.has(e.code);
    // The job itself is gone with its children: no later attempt will report this run.
    const vanished = isSyncError(e) && e.code === ErrorCodes.JOBS_VANISHED;
    const lastAttempt = unrecoverable || vanished || job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
    logger.error({ code, err: message, attempt: job.attemptsMade + 1, unrecoverable }, 'reconcile run failed');
    if (lastAttempt) {
      const r = record('failed', { code, message });
      recordRun(tenant, 'reconcile', 'failed', r.durationMs / 1000, logger, { runId, code });
      await rt.state.pushHistory(r, cfg.daemon.historyLength);
      // Redis losing its data is not the tenant's failure: no quarantine for it.
      if (!vanished) {
        const qs = await rt.state.recordFailure(`${code}: ${message}`, cfg.daemon.quarantine);
        setQuarantined(tenant, qs.quarantined);
      }
    }
    if (unrecoverable) throw new UnrecoverableError(`${code}: ${message}`);
    throw e;
  } finally {
    await source.close?.();
    await lease.release().catch(() => undefined);
  }
}

/**
 * Write-ahead, before any request: pending creates and the pruned ledger are saved. Written
 * entry by entry, never as a whole: chunks of an earlier run taken over from a dead replica
 * may still be recording objects, and a whole-ledger write would drop them.
 */
export async function writeAheadLedger(rt: TenantRuntime, plan: Plan, ledger: Ledger): Promise<void> {
  const pruned = ledger.takePruned();
  await rt.ledger.forgetMany('user', pruned.user);
  await rt.ledger.forgetMany('group', pruned.group);
  await rt.ledger.markPending(
    'user',
    plan.users.create.map((c) => c.externalId),
  );
  await rt.ledger.markPending(
    'group',
    plan.groups.create.map((c) => c.externalId),
  );
  // user-attribute values read while planning: kept, so the next run need not read them again.
  await rt.ledger.recordAttributePlanning({
    states: ledger.attributes.takeChangedStates(),
    forgotten: ledger.attributes.takeForgottenDefinitions(),
    definitions: ledger.attributes.takeChangedDefinitions(),
  });
}

/** Fans the plan's phases out in order, each under the lease; stops after a phase that aborted the run. */
export async function runPhases(
  fanOut: FanOutDeps,
  tenant: string,
  runId: string,
  plan: Plan,
  lease: Pick<RunLease, 'assertHeld'>,
  onPhase?: (phase: string) => Promise<void>,
): Promise<void> {
  for (const phase of planPhases(plan)) {
    if (phase.tasks.length === 0) continue;
    await lease.assertHeld();
    await onPhase?.(phase.name);
    await runPhaseFannedOut(fanOut, tenant, runId, phase);
    if (await fanOut.redis.hexists(tenantKeys(fanOut.keyPrefix, tenant).runResult(runId), 'aborted')) break;
  }
}

export interface RunResultSummary {
  succeeded: Record<string, number>;
  membersAdded: number;
  membersRemoved: number;
  failed: ApplyFailure[];
  aborted?: string;
}

export async function collectRunResult(redis: RedisClient, keyPrefix: string, tenant: string, runId: string): Promise<RunResultSummary> {
  const keys = tenantKeys(keyPrefix, tenant);
  const [h, failures] = await Promise.all([redis.hgetall(keys.runResult(runId)), redis.lrange(keys.runFailures(runId), 0, -1)]);
  const succeeded: Record<string, number> = {};
  for (const [k, v] of Object.entries(h)) if (k.startsWith('ok:')) succeeded[k.slice(3)] = Number(v);
  return {
    succeeded,
    membersAdded: Number(h['membersAdded'] ?? 0),
    membersRemoved: Number(h['membersRemoved'] ?? 0),
    failed: failures.map((f) => JSON.parse(f) as ApplyFailure),
    ...(h['aborted'] !== undefined ? { aborted: h['aborted'] } : {}),
  };
}
