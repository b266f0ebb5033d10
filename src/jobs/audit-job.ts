/**
 * The audit export job of one tenant: the same engine as `audit export`, with its cursor,
 * dedupe set and dead letters in Redis. The engine's own Redis lease keeps it to one run per
 * tenant across replicas; a run that finds the lease taken is recorded as skipped.
 */
import { UnrecoverableError, type Job } from 'bullmq';
import { hostname } from 'node:os';
import { ErrorCodes, isSyncError } from '../errors.ts';
import type { Logger } from '../observability/logger.ts';
import { auditRecorder, recordRun } from '../observability/instrument.ts';
import { runAuditExport } from '../audit/run-audit-export.ts';
import { RedisAuditStateStore } from '../audit/state/redis-store.ts';
import { RedisDeadLetterStore } from '../audit/dead-letter/redis-store.ts';
import { createSink } from '../audit/sinks/registry.ts';
import type { RedisClient } from './redis.ts';
import { runJobSpanAttributes, runRecorder, runSpanAttributes, type RunRecord } from './tenant-state.ts';
import { withSpan } from '../observability/tracing/spans.ts';
import type { TenantRuntime } from './tenant-runtime.ts';
import { auditTenant, isUnrecoverableAuditError } from './audit-tenant.ts';

export interface AuditJobData {
  tenant: string;
  trigger: 'schedule' | 'manual';
}

export interface AuditJobDeps {
  redis: RedisClient;
  keyPrefix: string;
  tenants: Map<string, TenantRuntime>;
  logger: Logger;
  signal?: AbortSignal;
}

/** One audit export run, the root of its own trace (export windows and sink batches below). */
export function processAudit(job: Job<AuditJobData>, deps: AuditJobDeps): Promise<RunRecord> {
  return withSpan(
    'audit export run',
    runJobSpanAttributes(job),
    async (span) => {
      const r = await auditRun(job, deps, span.traceId);
      span.set(runSpanAttributes(r));
      return r;
    },
    { root: true },
  );
}

async function auditRun(job: Job<AuditJobData>, deps: AuditJobDeps, traceId: string): Promise<RunRecord> {
  const { tenant } = job.data;
  const { rt, audit } = auditTenant(deps.tenants, tenant);
  const logger = deps.logger.child({ tenant, jobId: job.id });
  const started = Date.now();
  const record = runRecorder(String(job.id), 'audit', started, traceId);
  const sinks = audit.sinks.map((s) => createSink(s, { configDir: rt.loaded.configDir, logger }));
  try {
    const summary = await runAuditExport({
      platform: rt.platform,
      config: audit,
      tenant,
      state: new RedisAuditStateStore(deps.redis, deps.keyPrefix, tenant),
      deadLetters: new RedisDeadLetterStore(deps.redis, deps.keyPrefix, tenant),
      sinks,
      observer: auditRecorder(tenant, logger),
      owner: `${hostname()}:${process.pid}`,
      ...(deps.signal ? { signal: deps.signal } : {}),
      onProgress: (p) =>
        void job.updateProgress({ ratio: p.ratio, windowIndex: p.windowIndex, windowCount: p.windowCount }).catch(() => undefined),
    });
    const r = record('success', {
      eventsRead: summary.eventsRead,
      delivered: summary.delivered,
      deadLettered: summary.deadLettered,
      duplicatesSkipped: summary.duplicatesSkipped,
      cursor: summary.cursorMs === null ? null : new Date(summary.cursorMs).toISOString(),
    });
    recordRun(tenant, 'audit', 'success', r.durationMs / 1000, logger, { eventsRead: summary.eventsRead });
    await rt.state.pushHistory(r, rt.loaded.config.daemon.historyLength);
    return r;
  } catch (e) {
    const code = isSyncError(e) ? e.code : 'E_UNEXPECTED';
    const message = e instanceof Error ? e.message : String(e);
    if (isSyncError(e) && e.code === ErrorCodes.CONFLICT) {
      const r = record('skipped', { reason: message });
      recordRun(tenant, 'audit', 'skipped', 0, logger, {});
      return r;
    }
    const unrecoverable = isUnrecoverableAuditError(e);
    if (unrecoverable || job.attemptsMade + 1 >= (job.opts.attempts ?? 1)) {
      const r = record('failed', { code, message });
      recordRun(tenant, 'audit', 'failed', r.durationMs / 1000, logger, { code });
      await rt.state.pushHistory(r, rt.loaded.config.daemon.historyLength);
    }
    if (unrecoverable) throw new UnrecoverableError(`${code}: ${message}`);
    throw e;
  }
}
