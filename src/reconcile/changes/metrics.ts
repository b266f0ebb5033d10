/**
 * Change-driven sync metrics on the shared registry (docs/metrics.md, "Change-driven sync").
 * Labels are the configured tenant id and closed sets (the defer reasons of
 * reconcile/targeted/types.ts, the outcomes below): never an identity.
 */
import { Counter, Gauge, Histogram } from 'prom-client';
import { METRIC_PREFIX, registry } from '../../observability/metrics.ts';

const p = METRIC_PREFIX;

/** What happened to one batch of changes. */
export type ChangeOutcome = 'applied' | 'deferred' | 'held' | 'full_read' | 'failed';

export const changeMetrics = {
  propagation: new Histogram({
    name: `${p}change_propagation_seconds`,
    help: 'Time from a change in the source (the directory’s own change time where it gives one, else its detection) to the platform acknowledging the batch’s writes',
    labelNames: ['tenant'] as const,
    buckets: [0.5, 1, 2, 5, 10, 30, 60, 120, 300, 900, 3600], // seconds, up to 1 h
    registers: [registry],
  }),
  changes: new Counter({
    name: `${p}changes_total`,
    help: 'Changed identities (users and groups) taken from the source by the change path, by outcome (applied, deferred, held, full_read, failed)',
    labelNames: ['tenant', 'outcome'] as const,
    registers: [registry],
  }),
  deferred: new Counter({
    name: `${p}changes_deferred_total`,
    help: 'Batches of changes left to a full reconcile, by reason (the targeted reconcile’s defer reasons, or the source’s full-read reasons)',
    labelNames: ['tenant', 'reason'] as const,
    registers: [registry],
  }),
  requestsPerChange: new Histogram({
    name: `${p}change_platform_requests`,
    help: 'Platform requests (reads of the neighbourhood and writes) spent per changed identity in one batch',
    labelNames: ['tenant'] as const,
    buckets: [0, 1, 2, 3, 5, 8, 13, 21, 50, 100],
    registers: [registry],
  }),
  streamLag: new Gauge({
    name: `${p}change_stream_lag_seconds`,
    help: 'Seconds since the change stream last asked the source and applied what it got (grows while the stream is stopped or stuck)',
    labelNames: ['tenant'] as const,
    registers: [registry],
  }),
  cursorAge: new Gauge({
    name: `${p}change_cursor_age_seconds`,
    help: 'Seconds since the change cursor of the tenant was last saved (advanced after the platform acknowledged a batch)',
    labelNames: ['tenant'] as const,
    registers: [registry],
  }),
  streamRunning: new Gauge({
    name: `${p}change_stream_running`,
    help: '1 on the replica that runs the tenant’s change stream, 0 elsewhere',
    labelNames: ['tenant'] as const,
    registers: [registry],
  }),
};
