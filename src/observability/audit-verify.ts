/**
 * A scheduled `audit verify` → its metrics and its log line. The report names windows and
 * counts, never event contents; the missing events' keys stay in the report (the CLI's).
 */
import { auditMetrics } from '../audit/metrics.ts';
import type { VerifyReport } from '../audit/verify/verify-types.ts';
import type { Logger } from './logger.ts';

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

export function recordAuditVerify(tenant: string, report: VerifyReport, logger: Logger | undefined): 'match' | 'gap' {
  const result = report.windowsDiffering > 0 ? 'gap' : 'match';
  auditMetrics.verifyRunsTotal.inc({ tenant, result });
  auditMetrics.verifyGapWindows.set({ tenant }, report.windowsDiffering);
  auditMetrics.verifyMissing.set({ tenant }, report.missing);
  const fields = {
    from: iso(report.fromMs),
    to: iso(report.toMs),
    windowsChecked: report.windowsChecked,
    windowsDiffering: report.windowsDiffering,
    missing: report.missing,
    unexpected: report.unexpected,
    windows: report.windows.slice(0, 50).map((w) => ({ start: iso(w.startMs), missing: w.missing, unexpected: w.unexpected })),
  };
  if (result === 'gap') logger?.error(fields, 'audit verify found windows that differ from what was delivered');
  else logger?.info(fields, 'audit verify: every settled window matches');
  return result;
}

export function recordAuditVerifyFailed(tenant: string, code: string, message: string, logger: Logger | undefined): void {
  auditMetrics.verifyRunsTotal.inc({ tenant, result: 'failed' });
  logger?.error({ code, err: message }, 'audit verify failed');
}
