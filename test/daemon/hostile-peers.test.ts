/**
 * Faults of a peer do not take the daemon down. A proxy login page answering the audit
 * export fails the audit job with E_EXPORT_NOT_CSV (counted by code in
 * scimsync_audit_window_failures_total) and nothing reaches the sink; an HTTP sink whose
 * receiver resets every connection fails the job with the sink's code; an LDAP server that
 * resets the connection fails the reconcile with E_SOURCE_FAILED. Each time /healthz keeps
 * answering and the daemon takes the next job.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { auditRedisKeys } from '../../src/audit/state/redis-keys.ts';
import { loadAllTenants } from '../../src/config/load.ts';
import { openControl } from '../../src/jobs/control.ts';
import { triggerRun } from '../../src/jobs/schedulers.ts';
import {
  NEVER,
  createDaemonWorkspace,
  daemonSharedConfig,
  tenantConfig,
  httpGet,
  metricValue,
  waitFor,
  type DaemonWorkspace,
} from '../helpers/daemon-harness.ts';
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

describe('daemon against hostile sinks and sources', () => {
  it('an HTTP sink whose receiver resets every connection fails the audit job with its code; the daemon keeps serving', async () => {
    const hour = 3_600_000;
    const startMs = Math.floor(Date.now() / hour) * hour - hour;
    const csv = `timestamp,event_id,event_name\n${new Date(startMs + 1000).toISOString()},ev-1,Logged in\n`;
    server = await startHostileServer((io, req) => {
      if (req.path === '/api/v1/audit-logs/export') return answer.full(200, { 'content-type': 'text/csv' }, csv)(io, req);
      io.destroy(); // the sink's receiver: a reset on every request
    });
    ws = createDaemonWorkspace({ env: { SIM_URL: server.url, SIM_TOKEN: TOKEN } });
    ws.writeDirectory({ users: [], groups: [] });
    ws.writeConfig({
      daemon: { jobAttempts: 1 },
      schedules: { audit: { pattern: NEVER, enabled: true } },
      audit: {
        settleSeconds: 0,
        backfill: { from: new Date(startMs).toISOString() },
        retry: { windowAttempts: 2, baseDelayMs: 1, maxDelayMs: 5 },
        sinks: [
          {
            type: 'http',
            name: 'collector',
            url: `${server.url}/ingest`,
            allowInsecureHttp: true,
            retry: { maxAttempts: 2, baseDelayMs: 5, maxDelayMs: 10 },
          },
        ],
      },
    });
    const d = await ws.spawnDaemon();
    await triggerAudit(ws);
    const end = await waitFor(() => runsFinished([d], 'audit')[0], 'the audit run to end', 20_000);
    expect(end['result']).toBe('failed');
    expect(String(end['code'])).toMatch(/^E_[A-Z_]+$/);
    expect(d.child.exitCode).toBeNull();
    expect((await httpGet(`${d.url}/healthz`)).status).toBe(200);
    const metrics = (await httpGet(`${d.url}/metrics`)).body;
    expect(metricValue(metrics, 'scimsync_audit_window_failures_total', { tenant: 'acme', code: String(end['code']) })).toBe(1);
    // The events went nowhere: the cursor never moved.
    expect(await ws.redis().hget(auditRedisKeys(ws.keyPrefix, 'acme').state, 'cursorMs')).toBeNull();
    expect((await d.stop()).code).toBe(0);
  });

  it('an LDAP server that resets the connection fails the reconcile with E_SOURCE_FAILED; the daemon keeps serving', async () => {
    const sockets = new Set<Socket>();
    const ldap: Server = createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.once('data', () => socket.resetAndDestroy());
    });
    await new Promise<void>((resolve) => ldap.listen(0, '127.0.0.1', resolve));
    try {
      server = await startHostileServer(answer.full(404, { 'content-type': 'application/json' }, '{"error":"not here"}'));
      ws = createDaemonWorkspace({ env: { SIM_URL: server.url, SIM_TOKEN: TOKEN } });
      const shared = daemonSharedConfig(ws, { jobAttempts: 1 });
      ws.writeConfigObject({
        ...tenantConfig('acme'),
        ...shared,
        provisioning: {
          source: {
            type: 'ldap',
            url: `ldap://127.0.0.1:${(ldap.address() as AddressInfo).port}`,
            allowInsecure: true,
            bindDn: 'cn=reader,dc=example,dc=org',
            bindPassword: 'hostile-ldap-password-3e8f',
            users: { baseDn: 'ou=people,dc=example,dc=org' },
            groups: { baseDn: 'ou=groups,dc=example,dc=org' },
            connectTimeoutSeconds: 1,
            timeoutSeconds: 1,
          },
        },
      });
      const d = await ws.spawnDaemon();
      await ws.trigger();
      const end = await waitFor(() => runsFinished([d], 'reconcile')[0], 'the reconcile run to end', 20_000);
      expect(end['result']).toBe('failed');
      expect(end['code']).toBe('E_SOURCE_FAILED');
      expect(d.child.exitCode).toBeNull();
      expect((await httpGet(`${d.url}/healthz`)).status).toBe(200);
      const metrics = (await httpGet(`${d.url}/metrics`)).body;
      expect(metricValue(metrics, 'scimsync_reconcile_runs_total', { tenant: 'acme', result: 'failed' })).toBe(1);
      expect(d.output()).not.toContain('hostile-ldap-password-3e8f');
      expect((await d.stop()).code).toBe(0);
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => ldap.close(() => resolve()));
    }
  });
});
