import { describe, expect, it } from 'vitest';
import type { Counter, Gauge } from 'prom-client';
import {
  changeRecorder,
  recordChange,
  recordJob,
  recordPlan,
  recordRun,
  setManagedObjects,
  setQuarantined,
} from '../../src/observability/instrument.ts';
import { registry } from '../../src/observability/metrics.ts';
import { observedTenants } from '../../src/observability/tenant-observations.ts';
import { statusDocument } from '../../src/observability/status-document.ts';
import type { AppliedChange } from '../../src/reconcile/apply.ts';
import { captureLogger, scenarioPlan } from './support.ts';

/** The value of one series of a counter or gauge on the shared registry (0 when absent). */
async function value(name: string, labels: Record<string, string>): Promise<number> {
  const metric = registry.getSingleMetric(name) as Counter | Gauge | undefined;
  if (!metric) throw new Error(`metric ${name} is not registered`);
  const { values } = await metric.get();
  const hit = values.find(
    (v) => Object.entries(labels).every(([k, want]) => v.labels[k] === want) && Object.keys(v.labels).length === Object.keys(labels).length,
  );
  return hit?.value ?? 0;
}

async function histogramCount(name: string, labels: Record<string, string>): Promise<number> {
  const metric = registry.getSingleMetric(name);
  if (!metric) throw new Error(`metric ${name} is not registered`);
  const { values } = await metric.get();
  const hit = values.find(
    (v) =>
      (v as { metricName?: string }).metricName === `${name}_count` && Object.entries(labels).every(([k, want]) => v.labels[k] === want),
  );
  return hit?.value ?? 0;
}

describe('recordPlan', () => {
  it('counts drift on existing objects only, the guard trip, held deletes and source objects', async () => {
    const tenant = 'plan-tripped';
    const { logger, records } = captureLogger();
    recordPlan(tenant, scenarioPlan(tenant, { tripGuard: true }), logger);

    // a updated, c reactivated, eng renamed, eng members +b −p-x; ops is new, so not drift.
    expect(await value('scimsync_drift_detected_total', { tenant, kind: 'user_update' })).toBe(1);
    expect(await value('scimsync_drift_detected_total', { tenant, kind: 'user_reactivate' })).toBe(1);
    expect(await value('scimsync_drift_detected_total', { tenant, kind: 'group_update' })).toBe(1);
    expect(await value('scimsync_drift_detected_total', { tenant, kind: 'membership' })).toBe(2);
    expect(await value('scimsync_guard_trips_total', { tenant })).toBe(1);
    expect(await value('scimsync_deletes_held', { tenant })).toBe(1);
    expect(await value('scimsync_source_objects', { tenant, kind: 'user' })).toBe(4);
    expect(await value('scimsync_source_objects', { tenant, kind: 'group' })).toBe(2);
    expect(await value('scimsync_source_rejected_total', { tenant })).toBe(1);

    const lines = records();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 40,
      tenant,
      guard: { tripped: true, destructive: 1 },
      summary: { usersCreate: 1, usersDeactivate: 1 },
    });
  });

  it('clears the held-deletes gauge when a later plan is not held, and accumulates counters', async () => {
    const tenant = 'plan-clear';
    const { logger, records } = captureLogger();
    recordPlan(tenant, scenarioPlan(tenant, { tripGuard: true }), logger);
    recordPlan(tenant, scenarioPlan(tenant, { tripGuard: false }), logger);
    expect(await value('scimsync_deletes_held', { tenant })).toBe(0);
    expect(await value('scimsync_guard_trips_total', { tenant })).toBe(1);
    expect(await value('scimsync_drift_detected_total', { tenant, kind: 'membership' })).toBe(4);
    expect(records().map((r) => r['level'])).toEqual([40, 30]);
    expect(observedTenants().find((o) => o.tenant === tenant)?.deletesHeld).toBe(0);
  });
});

describe('recordChange', () => {
  const changes: AppliedChange[] = [
    { action: 'user.create', result: 'ok', id: 'p-e', externalId: 'e', name: 'e@example.com' },
    { action: 'user.adopt', result: 'ok', id: 'p-f', externalId: 'f', name: 'f@example.com' },
    {
      action: 'user.deactivate',
      result: 'failed',
      id: 'p-d',
      externalId: 'd',
      name: 'd@example.com',
      code: 'E_TRANSIENT',
      message: 'deactivate user: server busy (HTTP 503)',
    },
    { action: 'group.members', result: 'ok', id: 'g-eng', externalId: 'eng', name: 'Engineering', added: 3, removed: 2 },
    { action: 'group.members', result: 'ok', id: 'g-ops', externalId: 'ops', name: 'Ops', added: 1, removed: 0 },
  ];

  it('counts operations by resource, operation and result, and members by direction', async () => {
    const tenant = 'changes';
    const { logger } = captureLogger();
    const onChange = changeRecorder(tenant, logger);
    for (const c of changes) onChange(c);
    expect(await value('scimsync_scim_operations_total', { tenant, resource: 'user', operation: 'create', result: 'ok' })).toBe(1);
    expect(await value('scimsync_scim_operations_total', { tenant, resource: 'user', operation: 'adopt', result: 'ok' })).toBe(1);
    expect(await value('scimsync_scim_operations_total', { tenant, resource: 'user', operation: 'deactivate', result: 'failed' })).toBe(1);
    expect(await value('scimsync_scim_operations_total', { tenant, resource: 'group', operation: 'members', result: 'ok' })).toBe(2);
    expect(await value('scimsync_scim_members_changed_total', { tenant, direction: 'add' })).toBe(4);
    expect(await value('scimsync_scim_members_changed_total', { tenant, direction: 'remove' })).toBe(2);
  });

  it('writes exactly one structured line per change: info when ok, warn when failed', () => {
    const tenant = 'changes-log';
    const { logger, records } = captureLogger('info');
    for (const c of changes) recordChange(tenant, { ...c, ...({ extra: 'not logged' } as object) }, logger);
    const lines = records();
    expect(lines).toHaveLength(changes.length);
    expect(lines.map((l) => l['level'])).toEqual([30, 30, 40, 30, 30]);
    expect(lines[2]).toMatchObject({
      tenant,
      action: 'user.deactivate',
      result: 'failed',
      id: 'p-d',
      externalId: 'd',
      name: 'd@example.com',
      code: 'E_TRANSIENT',
      message: 'deactivate user: server busy (HTTP 503)',
    });
    expect(lines[3]).toMatchObject({ tenant, action: 'group.members', result: 'ok', id: 'g-eng', added: 3, removed: 2 });
    const allowed = new Set([
      'level',
      'time',
      'msg',
      'tenant',
      'action',
      'result',
      'id',
      'externalId',
      'name',
      'added',
      'removed',
      'code',
      'message',
    ]);
    for (const l of lines) expect(Object.keys(l).filter((k) => !allowed.has(k))).toEqual([]);
  });
});

describe('runs, quarantine, managed objects and jobs', () => {
  it('records reconcile runs by result with their duration and the last success time', async () => {
    const tenant = 'runs';
    const { logger, records } = captureLogger();
    const before = Date.now() / 1000;
    recordRun(tenant, 'reconcile', 'success', 12.5, logger);
    recordRun(tenant, 'reconcile', 'failed', 3, logger, { code: 'E_AUTH_INVALID' });
    recordRun(tenant, 'audit', 'success', 1, logger);
    expect(await value('scimsync_reconcile_runs_total', { tenant, result: 'success' })).toBe(1);
    expect(await value('scimsync_reconcile_runs_total', { tenant, result: 'failed' })).toBe(1);
    expect(await histogramCount('scimsync_reconcile_run_duration_seconds', { tenant })).toBe(2);
    const last = await value('scimsync_last_success_timestamp_seconds', { tenant, kind: 'reconcile' });
    expect(last).toBeGreaterThanOrEqual(Math.floor(before));
    expect(last).toBeLessThanOrEqual(Date.now() / 1000);
    expect(await value('scimsync_last_success_timestamp_seconds', { tenant, kind: 'audit' })).toBeGreaterThan(0);
    expect(records().map((r) => [r['level'], r['job'], r['result']])).toEqual([
      [30, 'reconcile', 'success'],
      [50, 'reconcile', 'failed'],
      [30, 'audit', 'success'],
    ]);
    expect(records()[1]).toMatchObject({ code: 'E_AUTH_INVALID', durationSeconds: 3 });
    const obs = observedTenants().find((o) => o.tenant === tenant);
    expect(obs?.lastRun.reconcile?.result).toBe('failed');
    expect(obs?.lastSuccess.reconcile).toBeDefined();
  });

  it('sets the quarantine and managed-object gauges', async () => {
    const tenant = 'gauges';
    setQuarantined(tenant, true);
    setManagedObjects(tenant, 120, 7);
    expect(await value('scimsync_tenant_quarantined', { tenant })).toBe(1);
    expect(await value('scimsync_managed_objects', { tenant, kind: 'user' })).toBe(120);
    expect(await value('scimsync_managed_objects', { tenant, kind: 'group' })).toBe(7);
    setQuarantined(tenant, false);
    expect(await value('scimsync_tenant_quarantined', { tenant })).toBe(0);
    expect(observedTenants().find((o) => o.tenant === tenant)).toMatchObject({ quarantined: false, managed: { users: 120, groups: 7 } });
  });

  it('counts jobs by queue and result and observes their duration', async () => {
    recordJob('q-instrument', 'completed', 0.2);
    recordJob('q-instrument', 'retried', 0.1);
    recordJob('q-instrument', 'completed');
    expect(await value('scimsync_jobs_total', { queue: 'q-instrument', result: 'completed' })).toBe(2);
    expect(await value('scimsync_jobs_total', { queue: 'q-instrument', result: 'retried' })).toBe(1);
    expect(await histogramCount('scimsync_job_duration_seconds', { queue: 'q-instrument' })).toBe(2);
  });
});

describe('statusDocument', () => {
  it('merges what the instrument saw with what the daemon adds, per tenant', () => {
    const { logger } = captureLogger('info');
    recordRun('status-a', 'reconcile', 'guard_held', 2, logger);
    setQuarantined('status-a', true);
    const doc = statusDocument(
      { 'status-a': { nextRun: { reconcile: '2026-11-21T13:00:00.000Z' } }, 'status-b': { audit: { cursor: null, lagSeconds: null } } },
      Date.parse('2026-11-21T12:00:00Z'),
    );
    expect(doc.generatedAt).toBe('2026-11-21T12:00:00.000Z');
    const a = doc.tenants.find((t) => t.tenant === 'status-a');
    expect(a).toMatchObject({
      quarantined: true,
      lastRun: { reconcile: { result: 'guard_held', durationSeconds: 2 } },
      nextRun: { reconcile: '2026-11-21T13:00:00.000Z' },
    });
    expect(doc.tenants.find((t) => t.tenant === 'status-b')).toMatchObject({ quarantined: false, deletesHeld: 0, audit: { cursor: null } });
    expect(JSON.parse(JSON.stringify(doc))).toEqual(doc);
  });
});
