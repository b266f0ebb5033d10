/**
 * `trigger audit-verify` against a running daemon: the job goes to the audit queue, the worker
 * runs the verify (not an export) and the gap metrics appear on /metrics.
 */
import { describe, expect, it } from 'vitest';
import { exampleDirectory } from '../helpers/reconcile-harness.ts';
import { httpGet, metricValue, NEVER, waitFor } from '../helpers/daemon-harness.ts';
import { closingAfterEach } from './support.ts';

const TOKEN = 'daemon-verify-token';
const HOUR = 3_600_000;
const use = closingAfterEach();

describe('daemon audit verify', () => {
  it('a triggered audit-verify job runs the verify and sets the gap metrics', async () => {
    const startMs = Math.floor((Date.now() - 15 * 60_000) / HOUR) * HOUR - 2 * HOUR;
    const sim = await use.sim(TOKEN, { audit: { startAt: new Date(startMs).toISOString(), eventsPerHour: 200, idColumn: true } });
    const ws = use.workspace({ SIM_URL: sim.url, SIM_TOKEN: TOKEN });
    ws.writeDirectory(exampleDirectory());
    ws.writeConfig({
      audit: {
        settleSeconds: 0,
        backfill: { from: new Date(startMs).toISOString() },
        sinks: [{ type: 'file', name: 'siem', path: './out/audit.ndjson' }],
      },
      schedules: { audit: { enabled: true, pattern: NEVER }, auditVerify: { enabled: true, pattern: NEVER, lookbackHours: 6 } },
    });
    const d = await ws.spawnDaemon();
    expect((await ws.cli(['trigger', 'audit', '--config', ws.configPath])).code).toBe(0);
    await d.waitForLog((l) => l.msg === 'audit export run finished', 30_000);
    const t = await ws.cli(['trigger', 'audit-verify', '--config', ws.configPath]);
    expect(t.code).toBe(0);
    expect(t.stdout).toMatch(/audit-verify run for tenant acme enqueued/);
    const line = await d.waitForLog((l) => l.msg === 'audit verify: every settled window matches', 30_000);
    expect(line['windowsChecked']).toBe(2);
    const metrics = await waitFor(async () => {
      const text = (await httpGet(`${d.url}/metrics`)).body;
      return metricValue(text, 'scimsync_audit_verify_runs_total', { tenant: 'acme', result: 'match' }) === 1 ? text : undefined;
    }, 'the verify run counted');
    expect(metricValue(metrics, 'scimsync_audit_verify_gap_windows', { tenant: 'acme' })).toBe(0);
    expect(metricValue(metrics, 'scimsync_audit_verify_missing_events', { tenant: 'acme' })).toBe(0);
  });
});
