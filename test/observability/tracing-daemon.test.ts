/**
 * Traces of real daemon processes, exported over OTLP/HTTP to a receiver on a loopback port:
 * a reconcile fanned out over two replicas is one trace (its chunk jobs continue it on either
 * replica, through the trace context in their job data), an audit export is one trace with
 * its windows and sink batches, a change batch is one trace, requests carry W3C `traceparent`, log lines and the run history
 * carry the ids, and no span holds a credential or a person's name. With tracing off, the
 * daemon loads neither the SDK nor the exporter.
 */
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { BIN, people, SCIM } from '../helpers/reconcile-harness.ts';
import { getJson, httpGet, jobHashes, waitFor, type DaemonWorkspace, type LogLine } from '../helpers/daemon-harness.ts';
import { startHttpReceiver, type HttpReceiver } from '../helpers/receivers/http-receiver.ts';
import { startOtlpReceiver, traceOf, type OtlpReceiver, type ReceivedSpan } from '../helpers/receivers/otlp-receiver.ts';
import { closingAfterEach, runsFinished } from '../daemon/support.ts';

const TOKEN = 'trace-platform-token-7d3e9a1c5b';
const SINK_TOKEN = 'trace-sink-token-2f8b6d4e0a';
const COLLECTOR_KEY = 'trace-collector-key-9a7c5e3b1d';
const HOUR = 3_600_000;
const CLIENT = 3;

const { sim, workspace } = closingAfterEach();
const receivers: Array<OtlpReceiver | HttpReceiver> = [];
afterEach(async () => {
  for (const r of receivers.splice(0)) await r.close();
});

async function otlpReceiver(): Promise<OtlpReceiver> {
  const r = await startOtlpReceiver();
  receivers.push(r);
  return r;
}

/** Environment of a traced daemon: the receiver as endpoint, its key from a headers file, a short batch delay. */
function tracedEnv(ws: DaemonWorkspace, otlp: OtlpReceiver): Record<string, string> {
  const file = join(ws.dir, 'otlp-headers');
  writeFileSync(file, `x-collector-key=${COLLECTOR_KEY}\n`);
  return { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_EXPORTER_OTLP_HEADERS_FILE: file, OTEL_BSP_SCHEDULE_DELAY: '100' };
}

/** Everything the receiver got, as sent: no secret and no person may be in it. */
function expectNothingPersonal(otlp: OtlpReceiver, forbidden: string[]): void {
  const sent = otlp.requests.map((r) => r.body.toString('utf8')).join('\n');
  expect(sent.length).toBeGreaterThan(0);
  for (const f of forbidden) expect(sent, f).not.toContain(f);
  expect(sent).not.toMatch(/@example\.com/);
}

const attr = (s: ReceivedSpan | undefined, key: string): unknown => s?.attributes[key];

describe('traces of the daemon', () => {
  it('a reconcile fanned out over two replicas is one complete trace: chunk spans under their phase on both replicas, platform requests under them', async () => {
    const platform = await sim(TOKEN);
    const otlp = await otlpReceiver();
    const ws = workspace({ SIM_URL: platform.url, SIM_TOKEN: TOKEN });
    Object.assign(ws.env, tracedEnv(ws, otlp));
    const users = people(1, 24);
    ws.writeDirectory({
      users,
      groups: [{ externalId: 'g-all', displayName: 'Everyone', members: users.slice(0, 6).map((u) => u.externalId) }],
    });
    ws.writeConfig({ daemon: { applyChunkSize: 2 } });
    // Each create takes a moment, so both replicas' workers take chunks.
    platform.setFaults([{ kind: 'latency', latencyMs: 40, method: 'POST', pathPrefix: `${SCIM}/Users` }]);
    const daemons = await Promise.all([ws.spawnDaemon(), ws.spawnDaemon()]);
    await ws.trigger();
    const finished = await waitFor(() => runsFinished(daemons, 'reconcile')[0], 'the run to finish', 30_000);
    expect(finished['result']).toBe('success');
    // The chunk jobs carry the phase's trace context (ids only).
    const chunkJobs = (await jobHashes(ws, 'reconcile-apply')).filter((j) => j.name === 'chunk');
    expect(chunkJobs.length).toBeGreaterThanOrEqual(12);
    // The run history links the run to its trace.
    const runner = daemons.find((d) => d.logs.includes(finished as LogLine))!;
    const status = await getJson<{ tenants: Array<{ runs: { reconcile: Array<{ traceId?: string }> } }> }>(`${runner.url}/status`);
    expect(status.status).toBe(200);
    for (const d of daemons) expect((await d.stop()).code).toBe(0);

    const root = otlp.spans.find((s) => s.name === 'reconcile run');
    expect(root).toBeDefined();
    const t = traceOf(otlp.spans, root!.traceId);
    // Complete: every span's parent is in the trace, except the root's.
    expect(t.unparented()).toEqual([root]);
    expect(root!.parentSpanId).toBe('');
    expect(attr(root, 'scimsync.tenant')).toBe('acme');
    expect(attr(root, 'scimsync.result')).toBe('success');
    const plan = daemons.flatMap((d) => d.logs).find((l) => l.msg === 'reconcile plan');
    expect(attr(root, 'scimsync.changes')).toBe((plan?.['summary'] as { changes?: number } | undefined)?.changes);
    expect(status.body.tenants[0]?.runs.reconcile[0]?.traceId).toBe(root!.traceId);
    for (const name of ['reconcile source read', 'reconcile platform listing', 'reconcile plan']) {
      const [s, ...more] = t.named(name);
      expect(more, name).toEqual([]);
      expect(s?.parentSpanId, name).toBe(root!.spanId);
    }
    expect(attr(t.named('reconcile source read')[0], 'scimsync.users')).toBe(24);
    // The listing's GETs are client spans under it, with a path template and the status.
    const listing = t.named('reconcile platform listing')[0]!;
    const gets = t.spans.filter((s) => s.kind === CLIENT && s.parentSpanId === listing.spanId);
    expect(gets.map((s) => s.name)).toContain(`GET ${SCIM}/Users`);
    expect(gets.every((s) => s.attributes['http.response.status_code'] === 200)).toBe(true);

    const phases = t.named('reconcile apply phase');
    expect(phases.length).toBeGreaterThanOrEqual(2);
    for (const p of phases) expect(p.parentSpanId).toBe(root!.spanId);
    const chunks = t.named('reconcile apply chunk');
    expect(chunks).toHaveLength(phases.reduce((n, p) => n + Number(attr(p, 'scimsync.chunks')), 0));
    for (const c of chunks) expect(attr(t.parentOf(c), 'scimsync.phase')).toBe(attr(c, 'scimsync.phase'));
    expect(chunkJobs.every((j) => String((j.data['trace'] as Record<string, string>)['traceparent']).includes(root!.traceId))).toBe(true);
    // Linked across replicas: chunks ran in both processes, all in this one trace.
    const pids = new Set(chunks.map((c) => c.resource['process.pid']));
    expect(pids).toEqual(new Set(daemons.map((d) => d.pid)));
    // Each create is a client span under the chunk that made it.
    const creates = t.spans.filter((s) => s.name === `POST ${SCIM}/Users`);
    expect(creates).toHaveLength(24);
    for (const c of creates) {
      expect(c.kind).toBe(CLIENT);
      expect(t.parentOf(c)?.name).toBe('reconcile apply chunk');
      expect(c.attributes['http.response.status_code']).toBe(201);
    }
    const group = t.spans.find((s) => s.kind === CLIENT && s.name.startsWith('POST') && s.name.includes('Groups'));
    expect(group?.name).toBe(`POST ${SCIM}/Groups`);
    expect(t.spans.filter((s) => s.kind === CLIENT && s.name.includes('{id}')).every((s) => !/[0-9a-f]{8}-/.test(s.name))).toBe(true);

    // The log line of the run carries the root's ids; a change line carries its chunk's.
    expect(finished['trace_id']).toBe(root!.traceId);
    expect(finished['span_id']).toBe(root!.spanId);
    const change = daemons.flatMap((d) => d.logs).find((l) => l.msg === 'scim change applied');
    expect(change?.['trace_id']).toBe(root!.traceId);
    expect(chunks.map((c) => c.spanId)).toContain(change?.['span_id']);

    expectNothingPersonal(otlp, [
      TOKEN,
      COLLECTOR_KEY,
      ...users.flatMap((u) => [u.userName, u.givenName ?? '', u.familyName ?? ''].filter(Boolean)),
    ]);
    expect(otlp.requests.every((r) => r.headers['x-collector-key'] === COLLECTOR_KEY)).toBe(true);
    for (const d of daemons) expect(d.output()).not.toContain(COLLECTOR_KEY);
  });

  it('an audit export is one trace, flushed at the stop: each window under the run, each sink batch under its window, the sink request with its traceparent', async () => {
    const startMs = Math.floor((Date.now() - 15 * 60_000) / HOUR) * HOUR - 2 * HOUR;
    const platform = await sim(TOKEN, { audit: { startAt: new Date(startMs).toISOString(), eventsPerHour: 120, idColumn: true } });
    const otlp = await otlpReceiver();
    const siem = await startHttpReceiver(() => ({ status: 200, body: {} }));
    receivers.push(siem);
    const ws = workspace({ SIM_URL: platform.url, SIM_TOKEN: TOKEN });
    // Spans wait in the batch processor for a minute: only the flush at the stop sends them.
    Object.assign(ws.env, tracedEnv(ws, otlp), { OTEL_BSP_SCHEDULE_DELAY: '60000' });
    writeFileSync(join(ws.dir, 'sink-token'), SINK_TOKEN);
    ws.writeDirectory({ users: [], groups: [] });
    ws.writeConfig({
      audit: {
        settleSeconds: 0,
        windowMinutes: 60,
        batchSize: 50,
        backfill: { from: new Date(startMs).toISOString() },
        sinks: [
          {
            type: 'http',
            name: 'siem',
            url: `${siem.url}/ingest`,
            allowInsecureHttp: true,
            auth: { type: 'bearer', tokenFile: 'sink-token' },
            batch: { maxEvents: 50 },
          },
        ],
      },
      schedules: { audit: { enabled: true, pattern: '0 0 1 1 *' } },
    });
    const d = await ws.spawnDaemon();
    expect((await ws.cli(['trigger', 'audit', '--config', ws.configPath])).code).toBe(0);
    const finished = await d.waitForLog((l) => l.msg === 'audit run finished', 30_000);
    expect(finished['result']).toBe('success');
    const history = (await httpGet(`${d.url}/status`)).body;
    expect(otlp.requests).toEqual([]);
    expect((await d.stop()).code).toBe(0);

    const root = otlp.spans.find((s) => s.name === 'audit export run');
    expect(root?.parentSpanId).toBe('');
    const t = traceOf(otlp.spans, root!.traceId);
    expect(t.unparented()).toEqual([root]);
    expect(attr(root, 'scimsync.result')).toBe('success');
    expect(attr(root, 'scimsync.events_read')).toBeGreaterThan(100);
    const windows = t.named('audit export window');
    expect(windows.length).toBeGreaterThanOrEqual(2);
    for (const w of windows) {
      expect(w.parentSpanId).toBe(root!.spanId);
      // The window's export request is a client span under it, without its query.
      const exports = t.spans.filter((s) => s.parentSpanId === w.spanId && s.kind === CLIENT);
      expect(exports.map((s) => s.name)).toEqual(['GET /api/v1/audit-logs/export']);
    }
    const batches = t.named('audit sink batch');
    expect(batches.reduce((n, b) => n + Number(attr(b, 'scimsync.delivered')), 0)).toBe(attr(root, 'scimsync.events_read'));
    for (const b of batches) {
      expect(t.parentOf(b)?.name).toBe('audit export window');
      expect(attr(b, 'scimsync.sink')).toBe('siem');
    }
    // Every request the SIEM received names its client span in `traceparent`.
    const posts = t.spans.filter((s) => s.kind === CLIENT && s.name === 'POST /ingest');
    expect(posts).toHaveLength(siem.requests.length);
    for (const req of siem.requests) {
      const [, traceId, spanId = ''] = String(req.headers['traceparent']).split('-');
      expect(traceId).toBe(root!.traceId);
      const span = t.spans.find((s) => s.spanId === spanId);
      expect(span?.name).toBe('POST /ingest');
      expect(t.parentOf(span!)?.name).toBe('audit sink batch');
    }
    expect(finished['trace_id']).toBe(root!.traceId);
    expect(history).toContain(root!.traceId);

    // The people named in the delivered events (their e-mail addresses) are in no span.
    const delivered = siem.requests.map((r) => r.body.toString('utf8')).join('\n');
    const emails = [...new Set(delivered.match(/[\w.+-]+@example\.com/g) ?? [])];
    expect(emails.length).toBeGreaterThan(0);
    expectNothingPersonal(otlp, [TOKEN, SINK_TOKEN, COLLECTOR_KEY, ...emails]);
  });

  it('a change batch is its own trace: the batch at the root, its apply phase and chunk under it, the create under the chunk', async () => {
    const platform = await sim(TOKEN);
    const otlp = await otlpReceiver();
    const ws = workspace({ SIM_URL: platform.url, SIM_TOKEN: TOKEN });
    Object.assign(ws.env, tracedEnv(ws, otlp));
    ws.writeDirectory({ users: people(1, 2), groups: [] });
    ws.writeConfig({ provisioning: { changes: { enabled: true, pollIntervalMs: 200, coalesceMs: 100 } } });
    const d = await ws.spawnDaemon();
    await waitFor(() => platform.store.users().length === 2, 'the first full reconcile', 20_000);
    await waitFor(() => d.logs.some((l) => l.msg === 'change stream running on this replica'), 'the change stream');
    await new Promise((r) => setTimeout(r, 500));
    ws.writeDirectory({ users: people(1, 3), groups: [] });
    await waitFor(() => d.logs.find((l) => l.msg === 'change stream: changes applied'), 'the batch', 15_000);
    expect((await d.stop()).code).toBe(0);

    const batch = otlp.spans.find((s) => s.name === 'change batch' && s.attributes['scimsync.result'] === 'applied');
    expect(batch?.parentSpanId).toBe('');
    expect(batch?.attributes['scimsync.writes']).toBe(1);
    const t = traceOf(otlp.spans, batch!.traceId);
    expect(t.unparented()).toEqual([batch]);
    const [create, ...others] = t.spans.filter((s) => s.name === `POST ${SCIM}/Users`);
    expect(others).toEqual([]);
    const chunk = t.parentOf(create!);
    expect(chunk?.name).toBe('reconcile apply chunk');
    expect(t.parentOf(chunk!)?.name).toBe('reconcile apply phase');
    expect(t.parentOf(t.parentOf(chunk!)!)).toBe(batch);
    expectNothingPersonal(otlp, [TOKEN, COLLECTOR_KEY, 'user3@example.com', 'Given3']);
  });

  it('with tracing off, the daemon runs a reconcile without loading the OpenTelemetry SDK or any exporter', async () => {
    const platform = await sim(TOKEN);
    const ws = workspace({ SIM_URL: platform.url, SIM_TOKEN: TOKEN });
    ws.writeDirectory({ users: people(1, 3), groups: [] });
    ws.writeConfig();
    const modulesFile = join(ws.dir, 'daemon.modules');
    const recorder = pathToFileURL(join(import.meta.dirname, '..', 'helpers', 'record-modules.ts')).href;
    const child = spawn(process.execPath, ['--import', recorder, BIN, 'daemon', '--config', ws.configPath], {
      cwd: ws.dir,
      env: { PATH: process.env['PATH'] ?? '', NO_COLOR: '1', SIM_URL: platform.url, SIM_TOKEN: TOKEN, RECORD_MODULES_OUT: modulesFile },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    child.stderr.on('data', (b: Buffer) => void (err += b.toString('utf8')));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      await waitFor(() => err.includes('"daemon started"'), 'the daemon to start', 20_000);
      await ws.trigger();
      await waitFor(() => err.includes('"reconcile run finished"'), 'the run to finish', 20_000);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    expect(platform.store.counts().users).toBe(3);
    expect(err).not.toMatch(/trace_id/);
    const packages = new Set(
      readFileSync(modulesFile, 'utf8')
        .split('\n')
        .map((u) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(u)?.[1])
        .filter((p): p is string => p !== undefined),
    );
    expect(packages).toContain('bullmq'); // the recorder saw the daemon's packages
    expect(packages).toContain('@opentelemetry/api');
    for (const pkg of [
      '@opentelemetry/sdk-node',
      '@opentelemetry/sdk-trace',
      '@opentelemetry/exporter-trace-otlp-http',
      '@opentelemetry/otlp-exporter-base',
      '@opentelemetry/resources',
    ])
      expect(packages, pkg).not.toContain(pkg);
  });
});
