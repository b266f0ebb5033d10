/**
 * Job Schedulers (cron, UTC) per tenant. upsertJobScheduler is idempotent, so every replica
 * can register them at start-up: many replicas starting at once still yield one job per tick.
 */
import type { Queue } from 'bullmq';
import type { TenantRuntime } from './tenant-runtime.ts';
import { reconcilePattern } from '../config/reconcile-schedule.ts';

export const schedulerId = (kind: 'reconcile' | 'audit' | 'audit-verify', tenant: string): string => `${kind}:${tenant}`;

export function jobOptions(attempts: number): {
  attempts: number;
  backoff: { type: 'exponential'; delay: number };
  removeOnComplete: { count: number };
  removeOnFail: { count: number };
} {
  return { attempts, backoff: { type: 'exponential', delay: 30_000 }, removeOnComplete: { count: 100 }, removeOnFail: { count: 500 } };
}

/** `changesFlow`: tenants whose change stream runs (their full reconcile defaults to every 6 hours). */
export async function registerSchedulers(
  queues: { reconcile: Queue; audit: Queue },
  tenants: Iterable<TenantRuntime>,
  changesFlow: ReadonlySet<string> = new Set(),
): Promise<void> {
  for (const rt of tenants) {
    const cfg = rt.loaded.config;
    const reconcile = { ...cfg.schedules.reconcile, pattern: reconcilePattern(cfg, changesFlow.has(rt.id)) };
    const attempts = cfg.daemon.jobAttempts;
    // One scheduler per job a tenant runs on a schedule: upserted when enabled, removed when not.
    // `audit-verify` (verify of the recent past) runs on the audit queue and is off by default.
    const jobs = [
      { queue: queues.reconcile, name: 'reconcile', schedule: reconcile, wanted: Boolean(cfg.provisioning) },
      { queue: queues.audit, name: 'audit', schedule: cfg.schedules.audit, wanted: Boolean(cfg.audit) },
      { queue: queues.audit, name: 'audit-verify', schedule: cfg.schedules.auditVerify, wanted: Boolean(cfg.audit) },
    ] as const;
    for (const j of jobs) {
      const id = schedulerId(j.name, rt.id);
      if (j.wanted && j.schedule.enabled)
        await upsertIfChanged(j.queue, id, j.schedule.pattern, j.name, { tenant: rt.id, trigger: 'schedule' }, attempts);
      else await j.queue.removeJobScheduler(id);
    }
  }
}

/**
 * Upserting a scheduler while its current job runs can make BullMQ run that tick a second
 * time (taskforcesh/bullmq#2876): every replica re-registering at start (a rolling restart)
 * would do it. An unchanged scheduler is left alone; a changed one is upserted (the run lease
 * fences out a duplicate run if the race still happens).
 */
async function upsertIfChanged(
  queue: Queue,
  id: string,
  pattern: string,
  name: string,
  data: Record<string, unknown>,
  attempts: number,
): Promise<void> {
  const have = await queue.getJobScheduler(id);
  const template = have?.template as { data?: unknown; opts?: { attempts?: number } } | undefined;
  const same =
    have?.pattern === pattern &&
    have.tz === 'UTC' &&
    have.name === name &&
    JSON.stringify(template?.data) === JSON.stringify(data) &&
    template?.opts?.attempts === attempts;
  // …and still has its next job (a scheduler whose job went missing is healed by the upsert).
  if (same && have.next !== undefined && (await queue.getJobState(`repeat:${id}:${have.next}`)) !== 'unknown') return;
  await queue.upsertJobScheduler(id, { pattern, tz: 'UTC' }, { name, data, opts: jobOptions(attempts) });
}

/**
 * On-demand run, deduplicated: while one manual run of the tenant is waiting, further triggers
 * collapse into it. A trigger during an active manual run is kept (keepLastIfActive) and runs
 * once after it: that run may already have read the source the operator just changed.
 */
export async function triggerRun(
  queue: Queue,
  kind: 'reconcile' | 'audit' | 'audit-verify',
  tenant: string,
  attempts: number,
  trigger: 'manual' | 'approval' | 'changes' = 'manual',
): Promise<string | undefined> {
  const job = await queue.add(
    kind,
    { tenant, trigger },
    { ...jobOptions(attempts), deduplication: { id: `${kind}:${tenant}:manual`, keepLastIfActive: true } },
  );
  return job.id;
}
