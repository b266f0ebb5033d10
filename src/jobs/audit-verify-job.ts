/**
 * The scheduled `audit verify` of one tenant (`schedules.auditVerify`): the same engine as the
 * CLI command over the last `lookbackHours`, on the audit queue. Read only — no run lease is
 * taken, the cursor and the sinks are never touched — so it may run beside an export.
 */
import { UnrecoverableError, type Job } from 'bullmq';
import { isSyncError } from '../errors.ts';
import type { Logger } from '../observability/logger.ts';
import { recordAuditVerify, recordAuditVerifyFailed } from '../observability/audit-verify.ts';
import { RedisAuditStateStore } from '../audit/state/redis-store.ts';
import { resolvePath } from '../audit/sinks/secrets.ts';
import { runAuditVerify } from '../audit/verify/run-verify.ts';
import type { RedisClient } from './redis.ts';
import type { TenantRuntime } from './tenant-runtime.ts';
import { auditTenant, isUnrecoverableAuditError } from './audit-tenant.ts';
import { withSpan } from '../observability/tracing/spans.ts';
import { runJobSpanAttributes } from './tenant-state.ts';

export const AUDIT_VERIFY_JOB = 'audit-verify';

export interface AuditVerifyJobData {
  tenant: string;
  trigger: 'schedule' | 'manual';
}

export interface AuditVerifyResult {
  result: 'match' | 'gap';
  windowsChecked: number;
  windowsDiffering: number;
  missing: number;
  unexpected: number;
}

export interface AuditVerifyJobDeps {
  redis: RedisClient;
  keyPrefix: string;
  tenants: Map<string, TenantRuntime>;
  logger: Logger;
  signal?: AbortSignal;
  now?: () => number;
}

/** One scheduled verify, the root of its own trace (the verify's platform requests below it). */
export function processAuditVerify(job: Job<AuditVerifyJobData>, deps: AuditVerifyJobDeps): Promise<AuditVerifyResult> {
  return withSpan(
    'audit verify run',
    runJobSpanAttributes(job),
    async (span) => {
      const r = await verifyRun(job, deps);
      span.set({
        'scimsync.result': r.result,
        'scimsync.windows_checked': r.windowsChecked,
        'scimsync.windows_differing': r.windowsDiffering,
      });
      return r;
    },
    { root: true },
  );
}

async function verifyRun(job: Job<AuditVerifyJobData>, deps: AuditVerifyJobDeps): Promise<AuditVerifyResult> {
  const { tenant } = job.data;
  const { rt, audit } = auditTenant(deps.tenants, tenant);
  const logger = deps.logger.child({ tenant, jobId: job.id });
  const toMs = (deps.now ?? Date.now)();
  const fromMs = toMs - rt.loaded.config.schedules.auditVerify.lookbackHours * 3_600_000;
  const fileSinks = audit.sinks.flatMap((s) =>
    s.type === 'file' ? [{ name: s.name, path: resolvePath(rt.loaded.configDir, s.path) }] : [],
  );
  try {
    const report = await runAuditVerify(
      {
        platform: rt.platform,
        config: audit,
        tenant,
        state: new RedisAuditStateStore(deps.redis, deps.keyPrefix, tenant),
        fileSinks,
        ...(deps.signal ? { signal: deps.signal } : {}),
      },
      { fromMs, toMs },
    );
    const result = recordAuditVerify(tenant, report, logger);
    return {
      result,
      windowsChecked: report.windowsChecked,
      windowsDiffering: report.windowsDiffering,
      missing: report.missing,
      unexpected: report.unexpected,
    };
  } catch (e) {
    const code = isSyncError(e) ? e.code : 'E_UNEXPECTED';
    const message = e instanceof Error ? e.message : String(e);
    const unrecoverable = isUnrecoverableAuditError(e);
    if (unrecoverable || job.attemptsMade + 1 >= (job.opts.attempts ?? 1)) recordAuditVerifyFailed(tenant, code, message, logger);
    if (unrecoverable) throw new UnrecoverableError(`${code}: ${message}`);
    throw e;
  }
}
