/**
 * Guards on every metric the daemon registers: naming (`scimsync_<what>_<unit>[_total]`)
 * and a closed allow-list of label names, so nobody can add `email` or `id` as a label.
 */
import { describe, expect, it } from 'vitest';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { allMetricNames, allSeriesNames } from '../../src/observability/metrics-catalog.ts';
import {
  platformHooks,
  recordChange,
  recordJob,
  recordPlan,
  recordRun,
  setManagedObjects,
  setQuarantined,
} from '../../src/observability/instrument.ts';
import { METRIC_PREFIX, initMetrics, registry } from '../../src/observability/metrics.ts';
import { auditMetrics } from '../../src/audit/metrics.ts';
import { sinkEvents } from '../../src/audit/sinks/metrics.ts';
import { VERSION } from '../../src/version.ts';
import { captureLogger, scenarioPlan } from './support.ts';

const ALLOWED_LABELS = new Set([
  'tenant',
  'result',
  'resource',
  'operation',
  'direction',
  'kind',
  'method',
  'route',
  'status',
  'queue',
  'state',
  'sink',
  'type',
  'code',
  'version',
  'node_version',
  'reason',
  // audit_sink_events_total{outcome}: delivered|rejected (declared in src/audit/sinks/metrics.ts).
  'outcome',
  // user_attribute_changes_planned_total{attribute}: the configured attribute name, a closed set (src/reconcile/attributes/metrics.ts).
  'attribute',
]);

/** prom-client's own process metrics, computed independently on a scratch registry. */
function defaultMetricNames(): Set<string> {
  const scratch = new Registry();
  collectDefaultMetrics({ register: scratch, prefix: METRIC_PREFIX });
  return new Set(scratch.getMetricsAsArray().map((m) => m.name));
}

function declaredLabels(name: string): string[] {
  const m = registry.getSingleMetric(name) as unknown as { labelNames?: string[] } | undefined;
  return m?.labelNames ?? [];
}

/** Touch every recording path so the JSON walk below sees real label sets, not only declarations. */
function exercise(): void {
  const { logger } = captureLogger('info');
  const tenant = 'conventions';
  const hooks = platformHooks(tenant, logger);
  hooks.onResponse?.({ method: 'GET', route: 'scim_users', status: 200, durationMs: 12, attempt: 1 });
  hooks.onResponse?.({ method: 'GET', route: 'scim_users', status: 0, durationMs: 3, attempt: 1 });
  hooks.onRetry?.({ method: 'GET', route: 'scim_users', status: 429, durationMs: 3, attempt: 1, delayMs: 500, reason: 'HTTP 429' });
  hooks.onRateLimited?.({ route: 'scim_users', retryAfterMs: 500 });
  recordPlan(tenant, scenarioPlan(tenant, { tripGuard: true }), logger);
  recordChange(tenant, { action: 'group.members', result: 'ok', id: 'g1', externalId: 'eng', name: 'Eng', added: 1, removed: 1 }, logger);
  recordRun(tenant, 'reconcile', 'success', 1, logger);
  recordRun(tenant, 'audit', 'success', 1, logger);
  setQuarantined(tenant, false);
  setManagedObjects(tenant, 1, 1);
  recordJob('reconcile', 'completed', 1);
  auditMetrics.eventsDelivered.inc({ tenant, sink: 'siem' });
  sinkEvents.inc({ sink: 'siem', type: 'http', outcome: 'delivered' });
}

describe('metric conventions', () => {
  initMetrics();
  exercise();
  const defaults = defaultMetricNames();
  const names = allMetricNames();
  const own = names.filter((n) => !defaults.has(n));

  it('registers process defaults and build_info under the prefix, once', async () => {
    initMetrics(); // a second call must not throw on duplicate registration
    for (const d of defaults) expect(names).toContain(d);
    expect(names).toContain('scimsync_process_cpu_seconds_total');
    const text = await registry.metrics();
    expect(text).toContain(`scimsync_build_info{version="${VERSION}",node_version="${process.versions.node}"} 1`);
  });

  it('names every metric scimsync_<snake_case>', () => {
    expect(names.length).toBeGreaterThan(40);
    for (const n of names) expect(n).toMatch(/^scimsync_[a-z0-9_]+$/);
  });

  it('suffixes counters with _total, and only counters', () => {
    for (const n of own) {
      const m = registry.getSingleMetric(n);
      if (m instanceof Counter) expect(n, `counter ${n}`).toMatch(/_total$/);
      else expect(n, `non-counter ${n}`).not.toMatch(/_total$/);
    }
  });

  it('puts the base unit last: seconds for time, never milliseconds; histograms always carry a unit', () => {
    for (const n of own) {
      const base = n.replace(/_total$/, '');
      expect(base, n).not.toMatch(/_(ms|milliseconds|minutes|hours|kb|mb)$/);
      if (/_(duration|lag|age|wait|timestamp)(_|$)/.test(base)) expect(base, n).toMatch(/_seconds$/);
      // `requests`: platform requests counted per unit of work (scimsync_change_platform_requests).
      if (registry.getSingleMetric(n) instanceof Histogram) expect(base, n).toMatch(/_(seconds|bytes|events|requests|ratio)$/);
    }
  });

  it('declares only allow-listed, low-cardinality label names', () => {
    // The walk reads real declarations (not an empty list that would pass anything).
    expect(declaredLabels('scimsync_scim_operations_total')).toEqual(['tenant', 'resource', 'operation', 'result']);
    for (const n of own) {
      const bad = declaredLabels(n).filter((l) => !ALLOWED_LABELS.has(l));
      expect(bad, `labels of ${n}`).toEqual([]);
    }
  });

  it('never names a label after a Prometheus target label (job, instance): it would be renamed exported_job and an alert on it would match nothing', () => {
    expect(declaredLabels('scimsync_last_success_timestamp_seconds')).toEqual(['tenant', 'kind']);
    for (const n of names) {
      const clash = declaredLabels(n).filter((l) => l === 'job' || l === 'instance' || l.startsWith('exported_') || l.startsWith('__'));
      expect(clash, `labels of ${n}`).toEqual([]);
    }
  });

  it('exposes only allow-listed label names in the collected series', async () => {
    const json = await registry.getMetricsAsJSON();
    let seen = 0;
    for (const m of json) {
      if (defaults.has(m.name)) continue;
      for (const v of m.values) {
        for (const l of Object.keys(v.labels)) {
          seen++;
          // `le` is the histogram bucket bound that prom-client adds itself.
          if (l !== 'le') expect(ALLOWED_LABELS.has(l), `label ${l} on ${m.name}`).toBe(true);
        }
      }
    }
    expect(seen).toBeGreaterThan(50);
  });

  it('lists the exact metrics the dashboards and alerts use', () => {
    const required = [
      'scimsync_build_info',
      'scimsync_reconcile_runs_total',
      'scimsync_reconcile_run_duration_seconds',
      'scimsync_scim_operations_total',
      'scimsync_scim_members_changed_total',
      'scimsync_managed_objects',
      'scimsync_drift_detected_total',
      'scimsync_guard_trips_total',
      'scimsync_deletes_held',
      'scimsync_tenant_quarantined',
      'scimsync_last_success_timestamp_seconds',
      'scimsync_source_objects',
      'scimsync_source_rejected_total',
      'scimsync_platform_requests_total',
      'scimsync_platform_request_duration_seconds',
      'scimsync_platform_retries_total',
      'scimsync_platform_rate_limited_total',
      'scimsync_rate_limit_wait_seconds_total',
      'scimsync_queue_jobs',
      'scimsync_jobs_total',
      'scimsync_job_duration_seconds',
      'scimsync_audit_lag_seconds',
      'scimsync_audit_events_dead_lettered_total',
      'scimsync_audit_sink_errors_total',
    ];
    expect(names.filter((n) => required.includes(n)).sort()).toEqual([...required].sort());
    const series = allSeriesNames();
    expect(series).toContain('scimsync_reconcile_run_duration_seconds_bucket');
    expect(series).toContain('scimsync_platform_request_duration_seconds_count');
    expect(series).not.toContain('scimsync_reconcile_run_duration_seconds');
  });
});
