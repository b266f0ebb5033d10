/**
 * Export-engine metrics on the shared registry (the sinks' own request metrics live in
 * sinks/metrics.ts). Labels: tenant and sink names only. Set only by `auditRecorder`
 * (src/observability/instrument.ts) from the engine's events; the engine never touches them.
 */
import { Counter, Gauge } from 'prom-client';
import { METRIC_PREFIX, registry } from '../observability/metrics.ts';

const p = `${METRIC_PREFIX}audit_`;

export const auditMetrics = {
  eventsRead: new Counter({
    name: `${p}events_read_total`,
    help: 'Audit events read from the export inside their window',
    labelNames: ['tenant'] as const,
    registers: [registry],
  }),
  eventsDelivered: new Counter({
    name: `${p}events_delivered_total`,
    help: 'Audit events acknowledged by a sink (including ones it already held)',
    labelNames: ['tenant', 'sink'] as const,
    registers: [registry],
  }),
  eventsDeadLettered: new Counter({
    name: `${p}events_dead_lettered_total`,
    help: 'Audit events or rows written to the dead-letter store, by sink (`_parse` for unparsable rows)',
    labelNames: ['tenant', 'sink'] as const,
    registers: [registry],
  }),
  duplicatesSkipped: new Counter({
    name: `${p}duplicates_skipped_total`,
    help: 'Audit events skipped because they were already delivered (overlap window)',
    labelNames: ['tenant'] as const,
    registers: [registry],
  }),
  parseErrors: new Counter({
    name: `${p}parse_errors_total`,
    help: 'Export rows that could not be parsed into an event',
    labelNames: ['tenant'] as const,
    registers: [registry],
  }),
  schemaDrift: new Counter({
    name: `${p}schema_drift_total`,
    help: 'Columns that appeared or disappeared in the export header',
    labelNames: ['tenant'] as const,
    registers: [registry],
  }),
  windowRetries: new Counter({
    name: `${p}window_retries_total`,
    help: 'Export windows retried after a transient failure',
    labelNames: ['tenant'] as const,
    registers: [registry],
  }),
  windowFailures: new Counter({
    name: `${p}window_failures_total`,
    help: 'Export window attempts that failed, by error code (an answer that is not a complete export, a network or sink failure)',
    labelNames: ['tenant', 'code'] as const,
    registers: [registry],
  }),
  lag: new Gauge({
    name: `${p}lag_seconds`,
    help: 'Wall clock minus the committed cursor',
    labelNames: ['tenant'] as const,
    registers: [registry],
  }),
  checkpointAge: new Gauge({
    name: `${p}checkpoint_age_seconds`,
    help: 'Time since the last committed checkpoint',
    labelNames: ['tenant'] as const,
    registers: [registry],
  }),
  verifyGapWindows: new Gauge({
    name: `${p}verify_gap_windows`,
    help: 'Windows the last `audit verify` of the daemon found differing from what was delivered (0 = no gap)',
    labelNames: ['tenant'] as const,
    registers: [registry],
  }),
  verifyMissing: new Gauge({
    name: `${p}verify_missing_events`,
    help: 'Events the last `audit verify` found on the platform and not in the recorded digests (a lower bound)',
    labelNames: ['tenant'] as const,
    registers: [registry],
  }),
  verifyRunsTotal: new Counter({
    name: `${p}verify_runs_total`,
    help: 'Scheduled `audit verify` runs by result: match, gap, failed',
    labelNames: ['tenant', 'result'] as const,
    registers: [registry],
  }),
  backfillProgress: new Gauge({
    name: `${p}backfill_progress_ratio`,
    help: "Share of the current run's range it has committed (a re-run starts at 0; 1 when done)",
    labelNames: ['tenant'] as const,
    registers: [registry],
  }),
};
