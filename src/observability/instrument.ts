/**
 * The one place that turns engine events into metrics and log lines, so the two never
 * disagree. Labels are the tenant id and closed sets only; e-mails, names and platform ids
 * go to the log lines (the sync's own audit trail), never into metrics. Nothing here sees a
 * credential: the platform hooks carry method, route, status and timings only.
 */
import { allUnmanagedWarning, ownershipCounts } from '../reconcile/ownership.ts';
import type { PlatformClientHooks } from '../platform/http-client.ts';
import { platformMetrics } from '../platform/metrics.ts';
import type { AppliedChange } from '../reconcile/apply.ts';
import { reconcileMetrics, type JobKind, type RunResult, type ScimOperation, type ScimResource } from '../reconcile/metrics.ts';
import type { Plan } from '../reconcile/plan-types.ts';
import { jobMetrics, type JobResult } from '../jobs/metrics.ts';
import { auditMetrics } from '../audit/metrics.ts';
import { PARSE_DEAD_LETTER } from '../audit/dead-letter/store.ts';
import type { AuditObserver } from '../audit/observer.ts';
import type { Logger } from './logger.ts';
import { observation } from './tenant-observations.ts';
import { countAttributeChange, isAttributeAction, recordAttributePlan } from '../reconcile/attributes/metrics.ts';

const r = reconcileMetrics;

/** Hooks for a PlatformClient serving `tenant`: request counts, latency, retries and 429s. */
/** The tenant field for a log line, unless the logger already carries it (pino would repeat the key). */
function tenantField(logger: Logger, tenant: string): { tenant?: string } {
  return 'tenant' in logger.bindings() ? {} : { tenant };
}

export function platformHooks(tenant: string, logger: Logger): PlatformClientHooks {
  const m = platformMetrics;
  return {
    onResponse(e) {
      m.requests.inc({ tenant, method: e.method, route: e.route, status: e.status === 0 ? 'network' : String(e.status) });
      // A network failure has no response time; its duration would only blur the histogram.
      if (e.status !== 0) m.duration.observe({ tenant, method: e.method, route: e.route }, e.durationMs / 1000);
    },
    onRetry(e) {
      m.retries.inc({ tenant, route: e.route });
      if (e.status === 429) m.rateLimitWait.inc({ tenant }, e.delayMs / 1000);
      logger.debug(
        {
          ...tenantField(logger, tenant),
          method: e.method,
          route: e.route,
          status: e.status,
          attempt: e.attempt,
          delayMs: Math.round(e.delayMs),
          reason: e.reason,
        },
        'platform request retried',
      );
    },
    onRateLimited(e) {
      m.rateLimited.inc({ tenant, route: e.route });
      logger.debug({ ...tenantField(logger, tenant), route: e.route, retryAfterMs: e.retryAfterMs }, 'platform rate limit (HTTP 429)');
    },
  };
}

/** Time spent in the global (cross-replica) limiter before a request, seconds. */
export function recordRateLimitWait(tenant: string, seconds: number): void {
  if (seconds > 0) platformMetrics.rateLimitWait.inc({ tenant }, seconds);
}

/** A plan was computed: drift, guard, source gauges, and one summary log line. */
export function recordPlan(tenant: string, plan: Plan, logger: Logger): void {
  const changed = <T extends { ops: unknown[] }>(list: T[]): number => list.filter((u) => u.ops.length > 0).length;
  // Drift = work on objects that already existed; creates are not drift, neither are
  // memberships of groups this run creates.
  const membership = plan.memberships.filter((m) => m.group.id !== undefined).reduce((n, m) => n + m.add.length + m.remove.length, 0);
  const drift = {
    user_update: changed(plan.users.update),
    user_reactivate: plan.users.reactivate.length,
    group_update: changed(plan.groups.update),
    membership,
  };
  for (const [kind, n] of Object.entries(drift)) if (n > 0) r.drift.inc({ tenant, kind }, n);

  const held = plan.guard.tripped ? plan.guard.destructive : 0;
  if (plan.guard.tripped) r.guardTrips.inc({ tenant });
  r.deletesHeld.set({ tenant }, held);
  observation(tenant).deletesHeld = held;

  const ownership = ownershipCounts(plan);
  r.unmanagedSkipped.set({ tenant, kind: 'user' }, ownership.skippedUnmanaged.users);
  r.unmanagedSkipped.set({ tenant, kind: 'group' }, ownership.skippedUnmanaged.groups);
  observation(tenant).unmanagedSkipped = ownership.skippedUnmanaged;
  const unmanagedWarning = allUnmanagedWarning(plan, 'Redis');
  if (unmanagedWarning !== undefined) logger.warn({ ...tenantField(logger, tenant), ...ownership }, unmanagedWarning);

  const s = plan.sourceStats;
  const sourceKinds = {
    user: s['sourceUsers'],
    group: s['sourceGroups'],
    user_in_scope: s['inScopeUsers'],
    group_in_scope: s['inScopeGroups'],
  };
  for (const [kind, n] of Object.entries(sourceKinds)) if (n !== undefined) r.sourceObjects.set({ tenant, kind }, n);
  if (plan.rejected.length > 0) r.sourceRejected.inc({ tenant }, plan.rejected.length);
  for (const w of plan.warnings ?? []) r.planWarnings.inc({ tenant, code: w.code });
  const conflicts = plan.conflicts ?? [];
  r.identityConflicts.set({ tenant }, conflicts.length);
  if (conflicts.length > 0)
    logger.warn(
      {
        ...tenantField(logger, tenant),
        conflicts: conflicts.slice(0, 20).map((k) => ({ name: k.name, externalId: k.externalId, account: k.account })),
      },
      `${conflicts.length} identity conflicts: source users not created because their userName is held by the account of someone not in the source (see the plan's conflicts)`,
    );
  recordAttributePlan(tenant, plan, logger);

  const guard = {
    tripped: plan.guard.tripped,
    overridden: plan.guard.overridden,
    destructive: plan.guard.destructive,
    managed: plan.guard.managed,
    reasons: plan.guard.reasons,
  };
  const fields = { ...tenantField(logger, tenant), source: plan.source, summary: plan.summary, drift, guard };
  if (plan.guard.tripped) logger.warn(fields, 'reconcile plan: deletion guard tripped, destructive operations held');
  else logger.info(fields, 'reconcile plan');
}

/** One applied (or failed) SCIM change: the operations counter and one audit-trail log line. */
export function recordChange(tenant: string, change: AppliedChange, logger: Logger): void {
  if (isAttributeAction(change.action)) countAttributeChange(tenant, change.action, change.result);
  else {
    const [resource, op] = change.action.split('.') as [ScimResource, ScimOperation];
    r.scimOperations.inc({ tenant, resource, operation: op, result: change.result });
  }
  if (change.added) r.membersChanged.inc({ tenant, direction: 'add' }, change.added);
  if (change.removed) r.membersChanged.inc({ tenant, direction: 'remove' }, change.removed);
  const { action, result, id, externalId, name, added, removed, code, message } = change;
  // Explicit fields only: whatever else a caller hangs on the change stays out of the log.
  const line = { ...tenantField(logger, tenant), action, result, id, externalId, name, added, removed, code, message };
  const what = isAttributeAction(action) ? 'user attribute change' : 'scim change';
  if (result === 'ok') logger.info(line, `${what} applied`);
  else logger.warn(line, `${what} failed`);
}

/** `onChange` for applyPlan/applyReconcile, bound to a tenant and logger. */
export function changeRecorder(tenant: string, logger: Logger): (change: AppliedChange) => void {
  return (change) => recordChange(tenant, change, logger);
}

const RUN_LEVEL: Record<RunResult, 'info' | 'warn' | 'error'> = {
  success: 'info',
  skipped: 'info',
  partial: 'warn',
  guard_held: 'warn',
  quarantined: 'warn',
  failed: 'error',
  lease_lost: 'warn',
};

/**
 * A reconcile or audit run ended. `fields` adds context to the log line (error code,
 * counts); it must not contain secrets or personal data beyond what the audit trail allows.
 */
export function recordRun(
  tenant: string,
  kind: JobKind,
  result: RunResult,
  durationSeconds: number,
  logger: Logger,
  fields: Record<string, unknown> = {},
): void {
  const now = Date.now();
  if (kind === 'reconcile') {
    r.runs.inc({ tenant, result });
    r.runDuration.observe({ tenant }, durationSeconds);
  }
  const o = observation(tenant);
  o.lastRun[kind] = { result, finishedAt: new Date(now).toISOString(), durationSeconds };
  if (result === 'success') {
    r.lastSuccess.set({ tenant, kind }, now / 1000);
    o.lastSuccess[kind] = new Date(now).toISOString();
  }
  logger[RUN_LEVEL[result]](
    { ...fields, ...tenantField(logger, tenant), job: kind, result, durationSeconds: Math.round(durationSeconds * 1000) / 1000 },
    `${kind} run finished`,
  );
}

/** Deletes currently held by the guard (refreshed from Redis, so every replica reports the cluster-wide value). */
export function setDeletesHeld(tenant: string, held: number): void {
  r.deletesHeld.set({ tenant }, held);
  observation(tenant).deletesHeld = held;
}

export function setQuarantined(tenant: string, on: boolean): void {
  r.quarantined.set({ tenant }, on ? 1 : 0);
  observation(tenant).quarantined = on;
}

/** Objects in the ownership ledger after a run. */
export function setManagedObjects(tenant: string, users: number, groups: number): void {
  r.managedObjects.set({ tenant, kind: 'user' }, users);
  r.managedObjects.set({ tenant, kind: 'group' }, groups);
  observation(tenant).managed = { users, groups };
}

/** A worker finished one job attempt (`retried` = failed but will be attempted again). */
export function recordJob(queue: string, result: JobResult, durationSeconds?: number): void {
  jobMetrics.jobs.inc({ queue, result });
  if (durationSeconds !== undefined) jobMetrics.duration.observe({ queue }, durationSeconds);
}

/**
 * The audit engine's events (src/audit/observer.ts) → the audit metrics and the engine's log
 * lines, for one tenant. Counts come per batch or per commit, never per row.
 */
export function auditRecorder(tenant: string, logger: Logger | undefined): AuditObserver {
  const m = auditMetrics;
  const t = { tenant };
  const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());
  return (e) => {
    switch (e.type) {
      case 'run-started':
        logger?.info({ from: iso(e.fromMs), to: iso(e.toMs), windows: e.windows, cursor: iso(e.cursorMs) }, 'audit export run starting');
        return;
      case 'run-finished':
        logger?.info(e.summary, 'audit export run finished');
        return;
      case 'state':
        if (e.cursorMs !== null) m.lag.set(t, Math.max(0, (e.nowMs - e.cursorMs) / 1000));
        if (e.updatedAtMs !== null) m.checkpointAge.set(t, Math.max(0, (e.nowMs - e.updatedAtMs) / 1000));
        return;
      case 'events-read':
        if (e.read > 0) m.eventsRead.inc(t, e.read);
        if (e.duplicates > 0) m.duplicatesSkipped.inc(t, e.duplicates);
        return;
      case 'delivered':
        if (e.delivered + e.alreadyHeld > 0) m.eventsDelivered.inc({ tenant, sink: e.sink }, e.delivered + e.alreadyHeld);
        if (e.deadLettered > 0) m.eventsDeadLettered.inc({ tenant, sink: e.sink }, e.deadLettered);
        return;
      case 'parse-errors':
        m.parseErrors.inc(t, e.rows);
        m.eventsDeadLettered.inc({ tenant, sink: PARSE_DEAD_LETTER }, e.rows);
        return;
      case 'schema-drift':
        m.schemaDrift.inc(t, e.added.length + e.removed.length);
        logger?.warn(
          { added: e.added, removed: e.removed },
          'audit export columns changed (schema drift); events keep all current columns',
        );
        return;
      case 'id-column-missing':
        logger?.warn({ column: e.column }, 'configured audit id column is missing from the export; keys fall back to a hash of the row');
        return;
      case 'window-failed':
        m.windowFailures.inc({ ...t, code: e.code });
        return;
      case 'window-retry':
        m.windowRetries.inc(t);
        logger?.warn(
          { attempt: e.attempt, delayMs: e.delayMs, code: e.code, err: e.message, windowStart: iso(e.windowStartMs) },
          'audit export window failed, retrying',
        );
        return;
      case 'committed':
        m.lag.set(t, Math.max(0, (e.atMs - e.cursorMs) / 1000));
        m.checkpointAge.set(t, 0);
        m.backfillProgress.set(t, e.progress);
        return;
      case 'sink-close-failed':
        logger?.error({ err: e.message, sink: e.sink }, 'audit sink close failed');
        return;
    }
  };
}
