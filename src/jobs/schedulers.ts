/**
 * Job Schedulers (cron, UTC) per tenant. upsertJobScheduler is idempotent, so every replica
 * can register them at start-up: many replicas starting at once still yield one job per tick.
 */
import type { Queue } from 'bullmq';
import type { TenantRuntime } from './tenant-runtime.ts';

export const schedulerId = (kind: 'reconcile' | 'audit', tenant: string): string => `${kind}:${tenant}`;

export function jobOptions(attempts: number): { attempts: number; backoff: { type: 'exponential'; delay: number }; removeOnComplete: { count: number }; removeOnFail: { count: number } } {
  return { attempts, backoff: { type: 'exponential', delay: 30_000 }, removeOnComplete: { count: 100 }, removeOnFail: { count: 500 } };
}

export async function registerSchedulers(queues: { reconcile: Queue; audit: Queue }, tenants: Iterable<TenantRuntime>): Promise<void> {
  for (const rt of tenants) {
    const cfg = rt.loaded.config;
    const attempts = cfg.daemon.jobAttempts;
    const rec = cfg.schedules.reconcile;
    if (cfg.provisioning && rec.enabled) {
      await queues.reconcile.upsertJobScheduler(schedulerId('reconcile', rt.id), { pattern: rec.pattern, tz: 'UTC' }, { name: 'reconcile', data: { tenant: rt.id, trigger: 'schedule' }, opts: jobOptions(attempts) });
    } else {
      await queues.reconcile.removeJobScheduler(schedulerId('reconcile', rt.id));
    }
    const aud = cfg.schedules.audit;
    if (cfg.audit && aud.enabled) {
      await queues.audit.upsertJobScheduler(schedulerId('audit', rt.id), { pattern: aud.pattern, tz: 'UTC' }, { name: 'audit', data: { tenant: rt.id, trigger: 'schedule' }, opts: jobOptions(attempts) });
    } else {
      await queues.audit.removeJobScheduler(schedulerId('audit', rt.id));
    }
  }
}

/**
 * On-demand run, deduplicated: while one manual run of the tenant is waiting, further triggers
 * collapse into it. A trigger during an active manual run is kept (keepLastIfActive) and runs
 * once after it: that run may already have read the source the operator just changed.
 */
export async function triggerRun(queue: Queue, kind: 'reconcile' | 'audit', tenant: string, attempts: number, trigger: 'manual' | 'approval' = 'manual'): Promise<string | undefined> {
  const job = await queue.add(kind, { tenant, trigger }, { ...jobOptions(attempts), deduplication: { id: `${kind}:${tenant}:manual`, keepLastIfActive: true } });
  return job.id;
}
