/**
 * A proxy login page answering the audit export does not take the daemon down: the audit job
 * fails with E_EXPORT_NOT_CSV (counted by code in scimsync_audit_window_failures_total),
 * nothing reaches the sink, /healthz keeps answering and the next job runs.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadAllTenants } from '../../src/config/load.ts';
import { openControl } from '../../src/jobs/control.ts';
import { triggerRun } from '../../src/jobs/schedulers.ts';
import { NEVER, createDaemonWorkspace, httpGet, metricValue, waitFor, type DaemonWorkspace } from '../helpers/daemon-harness.ts';
import { answer, startHostileServer, type HostileServer } from '../helpers/hostile-http.ts';
import { runsFinished } from './support.ts';

const TOKEN = 'hostile-export-token-5b1e9c3d7a';
let ws: DaemonWorkspace | undefined;
let server: HostileServer | undefined;
afterEach(async () => {
  await ws?.cleanup();
  await server?.close();
  ws = undefined;
  server = undefined;
});

async function triggerAudit(w: DaemonWorkspace): Promise<void> {
  const all = await loadAllTenants(w.configPath, { ...w.env, PATH: process.env['PATH'] ?? '' });
  const control = openControl(all);
  try {
    for (const l of all) await triggerRun(control.queues.audit, 'audit', l.config.tenant, l.config.daemon.jobAttempts);
  } finally {
    await control.close();
  }
}

describe('daemon against a hostile audit export', () => {
  it('a proxy login page fails the audit job with its code; the daemon keeps serving', async () => {
    server = await startHostileServer(answer.full(200, { 'content-type': 'text/html' }, '<html>Please log in</html>'));
    ws = createDaemonWorkspace({ env: { SIM_URL: server.url, SIM_TOKEN: TOKEN } });
    ws.writeDirectory({ users: [], groups: [] });
    const sinkPath = join(ws.dir, 'out', 'audit.ndjson');
    ws.writeConfig({
      daemon: { jobAttempts: 1 },
      schedules: { audit: { pattern: NEVER, enabled: true } },
      audit: {
        settleSeconds: 0,
        retry: { windowAttempts: 2, baseDelayMs: 1, maxDelayMs: 5 },
        sinks: [{ type: 'file', name: 'siem', path: sinkPath, fsync: false }],
      },
    });
    const d = await ws.spawnDaemon();

    await triggerAudit(ws);
    const end = await waitFor(() => runsFinished([d], 'audit')[0], 'the audit run to end', 20_000);
    expect(end['result']).toBe('failed');
    expect(end['code']).toBe('E_EXPORT_NOT_CSV');
    expect(d.child.exitCode).toBeNull();
    expect((await httpGet(`${d.url}/healthz`)).status).toBe(200);
    const metrics = (await httpGet(`${d.url}/metrics`)).body;
    expect(metricValue(metrics, 'scimsync_audit_window_failures_total', { tenant: 'acme', code: 'E_EXPORT_NOT_CSV' })).toBe(2);
    const history = (await ws.redis().lrange(`${ws.keyPrefix}:{acme}:history:audit`, 0, -1)).map(
      (h) => JSON.parse(h) as { result: string; detail: { code: string } },
    );
    expect(history.map((h) => [h.result, h.detail.code])).toEqual([['failed', 'E_EXPORT_NOT_CSV']]);
    expect(existsSync(sinkPath) ? readFileSync(sinkPath, 'utf8') : '').toBe('');

    // Still taking jobs: a second trigger runs (and fails the same way).
    await triggerAudit(ws);
    await waitFor(() => runsFinished([d], 'audit')[1], 'a second audit run', 20_000);
    expect((await httpGet(`${d.url}/healthz`)).status).toBe(200);
    expect((await d.stop()).code).toBe(0);
  });
});
