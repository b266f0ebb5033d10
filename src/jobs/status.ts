/**
 * The /status document and `scim-audit-sync status`: per tenant the last runs, next
 * schedules, audit cursor and lag, quarantine and deletes held by the guard — read from
 * Redis, so every replica (and the CLI) reports the same cluster-wide truth.
 */
import type { Queue } from 'bullmq';
import { auditStatus } from '../audit/status.ts';
import { RedisAuditStateStore } from '../audit/state/redis-store.ts';
import { RedisDeadLetterStore } from '../audit/dead-letter/redis-store.ts';
import { statusDocument, type StatusDocument } from '../observability/status-document.ts';
import type { RedisClient } from './redis.ts';
import { schedulerId } from './schedulers.ts';
import { TenantState } from './tenant-state.ts';
import { tenantKeys } from './keys.ts';

export interface StatusDeps {
  tenants: Map<string, { id: string; loaded: { config: { audit?: unknown; provisioning?: unknown } } }>;
  queues: { reconcile: Queue; audit: Queue; apply: Queue };
  redis: RedisClient;
  keyPrefix: string;
}

export async function daemonStatus(deps: StatusDeps): Promise<StatusDocument & { queues: Record<string, Record<string, number>> }> {
  const extra: Record<string, Record<string, unknown>> = {};
  for (const rt of deps.tenants.values()) {
    const state = new TenantState(deps.redis, deps.keyPrefix, rt.id);
    const keys = tenantKeys(deps.keyPrefix, rt.id);
    const [managedUsers, managedGroups] = await Promise.all([deps.redis.hlen(keys.ledgerUsers), deps.redis.hlen(keys.ledgerGroups)]);
    const [quarantine, held, approval, reconcileRuns, auditRuns, nextReconcile, nextAudit] = await Promise.all([
      state.quarantine(),
      state.heldDeletes(),
      state.hasApproval(),
      state.history('reconcile', 5),
      state.history('audit', 5),
      deps.queues.reconcile.getJobScheduler(schedulerId('reconcile', rt.id)),
      deps.queues.audit.getJobScheduler(schedulerId('audit', rt.id)),
    ]);
    const audit = rt.loaded.config.audit
      ? await auditStatus({
          tenant: rt.id,
          state: new RedisAuditStateStore(deps.redis, deps.keyPrefix, rt.id),
          deadLetters: new RedisDeadLetterStore(deps.redis, deps.keyPrefix, rt.id),
        })
      : null;
    extra[rt.id] = {
      nextRun: {
        reconcile: nextReconcile?.next ? new Date(nextReconcile.next).toISOString() : null,
        audit: nextAudit?.next ? new Date(nextAudit.next).toISOString() : null,
      },
      quarantine: { ...quarantine, until: quarantine.until ? new Date(quarantine.until).toISOString() : null },
      quarantined: quarantine.quarantined,
      heldDeletes: held ? { ...held, at: new Date(held.at).toISOString(), approved: approval } : null,
      deletesHeld: held?.count ?? 0,
      runs: { reconcile: reconcileRuns, audit: auditRuns },
      // The ledger in Redis (cluster-wide) and what the latest reconcile skipped as unmanaged.
      managed: { users: managedUsers, groups: managedGroups },
      unmanagedSkipped: (reconcileRuns[0]?.detail['ownership'] as { skippedUnmanaged?: unknown } | undefined)?.skippedUnmanaged ?? null,
      audit,
    };
  }
  const queues: Record<string, Record<string, number>> = {};
  for (const [name, q] of Object.entries(deps.queues))
    queues[name] = await q.getJobCounts('waiting', 'active', 'delayed', 'failed', 'completed');
  return { ...statusDocument(extra), queues };
}
