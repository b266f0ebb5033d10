/**
 * The alert rules and the Grafana dashboard shipped in the chart, checked against what the
 * daemon actually exports (its prom-client registry): every metric exists under that exact
 * series name, every label matched or grouped on is one the metric (or the scrape) has, and
 * every alert has a runbook section in docs/kubernetes.md.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Histogram } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { allMetricNames, allSeriesNames } from '../../src/observability/metrics-catalog.ts';
import { registry } from '../../src/observability/metrics.ts';
import { readChartFile, REPO_DIR } from './support/chart-files.ts';
import { balanced, groupingLabels, selectors } from './support/promql.ts';

interface Rule {
  alert: string;
  expr: string;
  for?: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

/** Labels Prometheus attaches when scraping through the ServiceMonitor (no metric has its own `job`, so no `exported_job`). */
const TARGET_LABELS = ['namespace', 'service', 'pod', 'container', 'endpoint', 'job', 'instance'];

const series = new Set(allSeriesNames());

/** Label names a series can carry: the metric's own, `le` on buckets, and the target labels. */
function labelsOf(seriesName: string): Set<string> | undefined {
  if (seriesName === 'up') return new Set(TARGET_LABELS);
  if (!series.has(seriesName)) return undefined;
  const base = allMetricNames().find((n) => n === seriesName || [`${n}_bucket`, `${n}_sum`, `${n}_count`].includes(seriesName)) as string;
  const metric = registry.getSingleMetric(base) as unknown as { labelNames?: string[] };
  const extra = metric instanceof Histogram && seriesName.endsWith('_bucket') ? ['le'] : [];
  return new Set([...(metric.labelNames ?? []), ...extra, ...TARGET_LABELS]);
}

/** What is wrong with one PromQL expression, if anything. */
function problems(expr: string): string[] {
  const out: string[] = [];
  if (!balanced(expr)) out.push(`unbalanced brackets: ${expr}`);
  const found = selectors(expr);
  if (found.length === 0) out.push(`selects no metric: ${expr}`);
  const usable = new Set<string>();
  for (const s of found) {
    const labels = labelsOf(s.metric);
    if (labels === undefined) {
      out.push(`${s.metric} is not exported by the daemon`);
      continue;
    }
    for (const l of labels) usable.add(l);
    for (const l of s.labels) if (!labels.has(l)) out.push(`${s.metric} has no label ${l}`);
  }
  for (const l of groupingLabels(expr))
    if (usable.size > 0 && !usable.has(l)) out.push(`groups on ${l}, which none of ${found.map((s) => s.metric).join(', ')} has`);
  return out;
}

const rulesText = readChartFile('files/prometheus-rules.yaml');
const rules = (parse(rulesText) as { groups: Array<{ name: string; rules: Rule[] }> }).groups.flatMap((g) => g.rules);
const dashboard = JSON.parse(readChartFile('dashboards/scim-audit-sync.json')) as Record<string, unknown>;
const docs = readFileSync(join(REPO_DIR, 'docs/kubernetes.md'), 'utf8');

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to dashes. */
const anchors = new Set(
  [...docs.matchAll(/^#{1,6}\s+(.+)$/gm)].map((m) =>
    (m[1] as string)
      .trim()
      .toLowerCase()
      .replace(/[^\w\- ]/g, '')
      .replace(/ /g, '-'),
  ),
);

interface Panel {
  id: number;
  type: string;
  title: string;
  datasource?: { uid: string };
  gridPos: { x: number; y: number; w: number; h: number };
  targets?: Array<{ expr: string; refId: string }>;
}

const panels = dashboard['panels'] as Panel[];
const dashboardExprs = [
  ...panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr)),
  ...(dashboard['templating'] as { list: Array<{ query: unknown }> }).list
    .map((v) => (typeof v.query === 'object' && v.query !== null ? (v.query as { query: string }).query : String(v.query)))
    .filter((q) => q.includes('('))
    .map((q) => q.replace(/^label_values\((.*),\s*\w+\)$/, '$1')),
];

describe('the metric checks themselves', () => {
  it('flag a metric the daemon does not export, a wrong label and a bare histogram name', () => {
    expect(problems('sum by (tenant) (rate(scimsync_reconcile_runs_total{result="failed"}[5m]))')).toEqual([]);
    expect(problems('rate(scimsync_reconcile_run_total[5m])')).toEqual(['scimsync_reconcile_run_total is not exported by the daemon']);
    expect(problems('scimsync_audit_lag_seconds{sink="x"}')).toEqual(['scimsync_audit_lag_seconds has no label sink']);
    expect(problems('histogram_quantile(0.9, rate(scimsync_platform_request_duration_seconds[5m]))')).toEqual([
      'scimsync_platform_request_duration_seconds is not exported by the daemon',
    ]);
    expect(problems('sum by (email) (scimsync_managed_objects)')).toEqual(['groups on email, which none of scimsync_managed_objects has']);
  });
});

describe('PrometheusRule alerts (files/prometheus-rules.yaml)', () => {
  it('use only metrics and labels the daemon exports', () => {
    expect(rules.length).toBeGreaterThanOrEqual(8);
    expect(rules.flatMap((r) => problems(r.expr).map((p) => `${r.alert}: ${p}`))).toEqual([]);
  });

  it('cover every alert the issue asks for, on the metric that shows it', () => {
    const on = (alert: string): string => rules.find((r) => r.alert === alert)?.expr ?? '';
    expect(on('ScimSyncReconcileFailing')).toContain('scimsync_reconcile_runs_total{');
    expect(on('ScimSyncTenantQuarantined')).toContain('scimsync_tenant_quarantined{');
    expect(on('ScimSyncDeletesHeld')).toContain('scimsync_deletes_held{');
    expect(on('ScimSyncAuditLagHigh')).toContain('scimsync_audit_lag_seconds{');
    expect(on('ScimSyncNoAuditEvents')).toContain('scimsync_audit_events_read_total{');
    expect(on('ScimSyncSinkErrors')).toContain('scimsync_audit_sink_errors_total{');
    expect(on('ScimSyncDeadLettersGrowing')).toContain('scimsync_audit_events_dead_lettered_total{');
    expect(on('ScimSyncDown')).toMatch(/absent\(up\{/);
  });

  it('each carry a severity, a summary, a description and a runbook section in docs/kubernetes.md', () => {
    expect(new Set(rules.map((r) => r.alert)).size).toBe(rules.length);
    for (const r of rules) {
      expect(['critical', 'warning'], r.alert).toContain(r.labels.severity);
      expect(r.annotations.summary, r.alert).toBeTruthy();
      expect(r.annotations.description, r.alert).toBeTruthy();
      expect(r.annotations.runbook_url, r.alert).toBe(`{{ $runbook }}#${r.alert.toLowerCase()}`);
      expect(anchors.has(r.alert.toLowerCase()), `docs/kubernetes.md has no "### ${r.alert}" section`).toBe(true);
      expect(r.for ?? '', r.alert).toMatch(/^\d+[smh]$/);
    }
  });

  it('select every series with the release selector, and escape Prometheus templates from Helm', () => {
    // Each metric is followed by `{ {{- $s` (the release's matchers), so two releases never mix.
    const unscoped = rules.flatMap((r) =>
      [...r.expr.matchAll(/\b(scimsync_[a-z0-9_]+|up)\b(.{0,8})/g)]
        .filter((m) => !(m[2] as string).startsWith('{ {{- $s'))
        .map((m) => `${r.alert}: ${m[1]}`),
    );
    expect(unscoped).toEqual([]);
    // `{{ $labels.x }}` must reach Prometheus, not Helm: only inside {{` … `}}.
    const unescaped = rulesText.replace(/\{\{`[\s\S]*?`\}\}/g, '').match(/\$labels|\$value/g);
    expect(unescaped).toBeNull();
  });

  it('can be disabled by name: the schema lists exactly these alerts', () => {
    const schema = JSON.parse(readChartFile('values.schema.json')) as {
      properties: { prometheusRule: { properties: { disabledAlerts: { items: { enum: string[] } } } } };
    };
    expect([...schema.properties.prometheusRule.properties.disabledAlerts.items.enum].sort()).toEqual(rules.map((r) => r.alert).sort());
  });
});

describe('Grafana dashboard (dashboards/scim-audit-sync.json)', () => {
  it('uses only metrics and labels the daemon exports', () => {
    expect(dashboardExprs.length).toBeGreaterThan(30);
    expect(dashboardExprs.flatMap((e) => problems(e).map((p) => `${p} (in ${e})`))).toEqual([]);
  });

  it('shows what the issue lists: runs, durations, operations, drift, platform latency and errors, lag, sinks, dead letters, queues', () => {
    const all = dashboardExprs.join('\n');
    for (const metric of [
      'scimsync_reconcile_runs_total',
      'scimsync_reconcile_run_duration_seconds_bucket',
      'scimsync_scim_operations_total',
      'scimsync_drift_detected_total',
      'scimsync_platform_request_duration_seconds_bucket',
      'scimsync_platform_requests_total',
      'scimsync_audit_lag_seconds',
      'scimsync_audit_events_delivered_total',
      'scimsync_audit_events_dead_lettered_total',
      'scimsync_queue_jobs',
    ])
      expect(all, metric).toContain(`${metric}{`);
  });

  it('is a provisionable dashboard: stable uid, datasource variable, unique ids, panels inside the grid', () => {
    expect(dashboard).toMatchObject({ uid: 'scim-audit-sync', title: 'scim-audit-sync', schemaVersion: expect.any(Number) });
    expect((dashboard['templating'] as { list: Array<{ name: string }> }).list.map((v) => v.name)).toEqual([
      'datasource',
      'namespace',
      'tenant',
    ]);
    expect(new Set(panels.map((p) => p.id)).size).toBe(panels.length);
    for (const p of panels) {
      expect(p.gridPos.x + p.gridPos.w, p.title).toBeLessThanOrEqual(24);
      if (p.type === 'row') continue;
      expect(p.datasource?.uid, p.title).toBe('${datasource}');
      expect(p.targets?.length, p.title).toBeGreaterThan(0);
    }
    expect(readChartFile('templates/dashboard-configmap.yaml')).toContain('.Files.Get "dashboards/scim-audit-sync.json"');
  });
});
