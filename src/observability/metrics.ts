/**
 * The process-wide Prometheus registry. Domain modules declare their own metrics in their
 * own files (reconcile/metrics.ts, audit/metrics.ts…) and register them here. Names follow
 * `scimsync_<what>_<unit>[_total]`; labels are low-cardinality only (never e-mails or ids).
 */
import { Registry } from 'prom-client';

export const registry = new Registry();
export const METRIC_PREFIX = 'scimsync_';
