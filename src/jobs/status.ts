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
import { RedisBurstStore, RedisChangeState } from './change-state.ts';

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
    const changes = rt.loaded.config.provisioning ? await changeStreamStatus(deps.redis, deps.keyPrefix, rt.id) : null;
    extra[rt.id] = {
      // The change stream (docs/daemon.md, "Change-driven sync"): null without provisioning.
      changes,
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

/** The tenant's change stream as every replica sees it: who runs it, when it last asked, its cursor and what it holds. */
async function changeStreamStatus(redis: RedisClient, keyPrefix: string, tenant: string): Promise<Record<string, unknown>> {
  const keys = tenantKeys(keyPrefix, tenant);
  const [s, lease, hold] = await Promise.all([
    new RedisChangeState(redis, keyPrefix, tenant).read(),
    redis.get(keys.lease('changes')),
    new RedisBurstStore(redis, keyPrefix, tenant).hold(),
  ]);
  const now = Date.now();
  const iso = (ms: number | undefined): string | null => (ms !== undefined ? new Date(ms).toISOString() : null);
  const owner = lease === null ? null : lease.replace(/^\d+ /, '');
  return {
    state: owner !== null ? 'running' : s.mechanism !== undefined ? 'stopped' : 'off',
    mechanism: s.mechanism || null,
    owner,
    cursor: s.cursor ?? null,
    cursorSavedAt: iso(s.cursorSavedAt),
    cursorAgeSeconds: s.cursorSavedAt !== undefined ? Math.round((now - s.cursorSavedAt) / 1000) : null,
    lastPollAt: iso(s.lastPollAt),
    lagSeconds: s.lastPollAt !== undefined ? Math.round((now - s.lastPollAt) / 1000) : null,
    lastBatchAt: iso(s.lastBatchAt),
    lastResult: s.lastResult ?? null,
    lastDeferred: s.lastDeferCode !== undefined ? { code: s.lastDeferCode, at: iso(s.lastDeferAt) } : null,
    heldBurst: hold ? { destructive: hold.destructive, memberRemovals: hold.memberRemovals, reasons: hold.reasons, at: iso(hold.at) } : null,
  };
}
