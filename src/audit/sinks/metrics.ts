/**
 * Sink metrics on the shared registry. Labels are the sink's configured name, its type,
 * a result or a stable error code: never event content, hosts or credentials.
 */
import { Counter, Histogram } from 'prom-client';
import { METRIC_PREFIX, registry } from '../../observability/metrics.ts';

/** `ok` all delivered, `partial` some rejected, `rejected` all rejected, `retry` will be retried, `error` gave up. */
export type RequestResult = 'ok' | 'partial' | 'rejected' | 'retry' | 'error';

export const sinkRequests = new Counter({
  name: `${METRIC_PREFIX}audit_sink_requests_total`,
  help: 'Requests (HTTP calls, file/stream/socket writes) made by audit sinks, by result',
  labelNames: ['sink', 'type', 'result'] as const,
  registers: [registry],
});

export const sinkRetries = new Counter({
  name: `${METRIC_PREFIX}audit_sink_retries_total`,
  help: 'Retries scheduled by audit sinks after a transient failure',
  labelNames: ['sink', 'type'] as const,
  registers: [registry],
});

export const sinkErrors = new Counter({
  name: `${METRIC_PREFIX}audit_sink_errors_total`,
  help: 'Audit sink failures and rejections by stable code',
  labelNames: ['sink', 'type', 'code'] as const,
  registers: [registry],
});

export const sinkEvents = new Counter({
  name: `${METRIC_PREFIX}audit_sink_events_total`,
  help: 'Audit events acknowledged by sinks, by outcome (delivered or rejected)',
  labelNames: ['sink', 'type', 'outcome'] as const,
  registers: [registry],
});

export const sinkRequestDuration = new Histogram({
  name: `${METRIC_PREFIX}audit_sink_request_duration_seconds`,
  help: 'Duration of one sink request attempt',
  labelNames: ['sink', 'type'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: [registry],
});

export const sinkBatchEvents = new Histogram({
  name: `${METRIC_PREFIX}audit_sink_batch_events`,
  help: 'Events per sink request',
  labelNames: ['sink', 'type'] as const,
  buckets: [1, 10, 50, 100, 250, 500, 1000, 2500, 5000, 10_000],
  registers: [registry],
});

export const sinkResentEvents = new Counter({
  name: `${METRIC_PREFIX}audit_sink_resent_events_total`,
  help: 'Events sent again after a connection broke before the receiver confirmed them (possible duplicates downstream)',
  labelNames: ['sink', 'type'] as const,
  registers: [registry],
});

export const sinkTruncatedEvents = new Counter({
  name: `${METRIC_PREFIX}audit_sink_truncated_events_total`,
  help: 'Events shortened to fit the destination message size limit (each carries a truncation marker)',
  labelNames: ['sink', 'type'] as const,
  registers: [registry],
});
