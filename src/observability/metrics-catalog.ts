/**
 * Every metric the daemon can expose, read back from the registry after importing every
 * module that declares metrics. Dashboards and alert rules are checked against this list,
 * so a renamed metric breaks a test instead of silently emptying a panel.
 */
import '../reconcile/metrics.ts';
import '../reconcile/attributes/metrics.ts';
import '../platform/metrics.ts';
import '../jobs/metrics.ts';
import '../reconcile/changes/metrics.ts';
import '../audit/metrics.ts';
import '../audit/sinks/metrics.ts';
import { Histogram } from 'prom-client';
import { initMetrics, registry } from './metrics.ts';

/** Metric family names (process defaults included), sorted. */
export function allMetricNames(): string[] {
  initMetrics();
  return registry
    .getMetricsAsArray()
    .map((m) => m.name)
    .sort();
}

/**
 * The series names a query can use: a histogram `x` appears as `x_bucket`, `x_sum` and
 * `x_count` (and never as `x` itself); every other family under its own name.
 */
export function allSeriesNames(): string[] {
  initMetrics();
  return registry
    .getMetricsAsArray()
    .flatMap((m) => (m instanceof Histogram ? [`${m.name}_bucket`, `${m.name}_sum`, `${m.name}_count`] : [m.name]))
    .sort();
}
