import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { registry } from '../../../src/observability/metrics.ts';
import { startHttpReceiver, type HttpReceiver } from '../../helpers/receivers/http-receiver.ts';
import { FAST_RETRY, makeEvents, memoryLogger, openSink, recordingObserver, rejectionOf } from './fixtures.ts';
import { eventDoc } from '../../../src/audit/event.ts';

const TOKEN = 'http-secret-token-1234';
let rx: HttpReceiver;

beforeEach(async () => {
  rx = await startHttpReceiver();
});
afterEach(async () => {
  await rx.close();
});

function base(extra: Record<string, unknown> = {}) {
  return {
    name: 'collector',
    type: 'http' as const,
    url: `${rx.url}/ingest`,
    allowInsecureHttp: true,
    retry: FAST_RETRY,
    auth: { type: 'bearer' as const, token: TOKEN },
    ...extra,
  };
}

describe('http sink', () => {
  it('posts JSON arrays split by maxEvents, with the bearer token, and acknowledges every event', async () => {
    const sink = await openSink(base({ batch: { maxEvents: 4 } }));
    const events = makeEvents(10);
    const res = await sink.write(events);
    expect(res).toEqual({ delivered: 10, rejected: [] });
    expect(rx.requests.map((r) => (JSON.parse(r.body.toString()) as unknown[]).length)).toEqual([4, 4, 2]);
    expect(rx.requests[0]!.headers['authorization']).toBe(`Bearer ${TOKEN}`);
    expect(rx.requests[0]!.headers['content-type']).toBe('application/json');
    expect(rx.requests[0]!.path).toBe('/ingest');
    const all = rx.requests.flatMap((r) => JSON.parse(r.body.toString()) as Array<Record<string, unknown>>);
    expect(all.map((d) => d['event.id'])).toEqual(events.map((e) => eventDoc(e)['event.id']));
    await sink.close();
  });

  it('splits by maxBytes and never exceeds it with more than one event', async () => {
    const sink = await openSink(base({ batch: { maxEvents: 1000, maxBytes: 1024 } }));
    const events = makeEvents(30);
    const one = Buffer.byteLength(JSON.stringify(eventDoc(events[0]!)));
    await sink.write(events);
    expect(rx.requests.length).toBeGreaterThan(1);
    for (const r of rx.requests) {
      const docs = JSON.parse(r.body.toString()) as unknown[];
      // payload bytes exclude the array brackets and commas
      expect(docs.length * one).toBeLessThanOrEqual(1024);
    }
    expect(rx.requests.flatMap((r) => JSON.parse(r.body.toString()) as unknown[])).toHaveLength(30);
    await sink.close();
  });

  it('sends NDJSON with gzip when asked', async () => {
    const sink = await openSink(base({ format: 'ndjson', compression: 'gzip', method: 'PUT' }));
    // The receiver gunzips by Content-Encoding: a non-gzip body would fail with 500 and never deliver.
    expect((await sink.write(makeEvents(3))).delivered).toBe(3);
    const req = rx.requests[0]!;
    expect(req.method).toBe('PUT');
    expect(req.headers['content-encoding']).toBe('gzip');
    expect(req.headers['content-type']).toBe('application/x-ndjson');
    expect(req.rawBytes).not.toBe(req.body.length);
    const lines = req.body.toString().trimEnd().split('\n');
    expect(lines.map((l) => (JSON.parse(l) as Record<string, unknown>)['event.id'])).toEqual(['evt-0', 'evt-1', 'evt-2']);
    await sink.close();
  });

  it('retries a 503 honouring Retry-After, then delivers', async () => {
    rx.setHandler((_req, i) => (i === 0 ? { status: 503, headers: { 'retry-after': '1' } } : { status: 200 }));
    const observer = recordingObserver();
    const sink = await openSink(base(), { observer });
    const started = Date.now();
    const res = await sink.write(makeEvents(2));
    expect(res.delivered).toBe(2);
    expect(rx.requests).toHaveLength(2);
    // Without Retry-After the fast test policy would wait at most 20 ms.
    expect(observer.retries.map((r) => r.delayMs)).toEqual([1000]);
    expect(rx.requests[1]!.at - rx.requests[0]!.at).toBeGreaterThanOrEqual(950);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    const metrics = await registry.getSingleMetricAsString('scimsync_audit_sink_retries_total');
    expect(metrics).toMatch(/scimsync_audit_sink_retries_total\{sink="collector",type="http"\} [1-9]/);
    await sink.close();
  });

  it('throws a transient SyncError when the retry budget is spent, without moving anything', async () => {
    rx.setHandler(() => ({ status: 500 }));
    const sink = await openSink(base());
    const err = await rejectionOf(sink.write(makeEvents(2)));
    expect(err.kind).toBe('transient');
    expect(err.code).toBe('E_TRANSIENT');
    expect(rx.requests).toHaveLength(FAST_RETRY.maxAttempts);
    await sink.close();
  });

  it('rejects the whole request on another 4xx with code http_<status>, never retrying it', async () => {
    rx.setHandler((_r, i) => (i === 0 ? { status: 422, body: { error: 'schema mismatch' } } : { status: 200 }));
    const sink = await openSink(base({ batch: { maxEvents: 2 } }));
    const res = await sink.write(makeEvents(4));
    expect(res.delivered).toBe(2);
    expect(res.rejected.map((r) => [r.event.key, r.code])).toEqual([
      ['evt-0', 'http_422'],
      ['evt-1', 'http_422'],
    ]);
    expect(res.rejected[0]!.reason).toContain('schema mismatch');
    expect(rx.requests).toHaveLength(2);
    await sink.close();
  });

  it('fails fatally on 401 and keeps the token out of the error and the logs, even if the server echoes it', async () => {
    rx.setHandler((req) => ({ status: 401, body: { error: `bad ${String(req.headers['authorization'])}` } }));
    const log = memoryLogger();
    const sink = await openSink(base(), { logger: log.logger });
    const err = await rejectionOf(sink.write(makeEvents(1)));
    expect(err.kind).toBe('fatal');
    expect(err.code).toBe('E_AUTH_INVALID');
    expect(err.message).toContain('auth.token');
    expect(JSON.stringify(err)).not.toContain(TOKEN);
    expect(err.message).not.toContain(TOKEN);
    expect(log.text()).toContain('E_AUTH_INVALID');
    expect(log.text()).not.toContain(TOKEN);
    await sink.close();
  });

  it('an echoed secret is scrubbed from rejection reasons (dead-letter entries)', async () => {
    rx.setHandler((req) => ({ status: 400, body: { error: `refused ${String(req.headers['authorization'])}` } }));
    const sink = await openSink(base({ auth: { type: 'basic', username: 'svc', password: 'p4ssw0rd-secret' } }));
    const res = await sink.write(makeEvents(1));
    expect(res.rejected).toHaveLength(1);
    const reason = res.rejected[0]!.reason;
    expect(reason).toContain('[redacted]');
    expect(reason).not.toContain(Buffer.from('svc:p4ssw0rd-secret').toString('base64'));
    await sink.close();
  });

  it('reads the token from tokenFile, trimming the trailing newline', async () => {
    const { mkdtempSync, writeFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const dir = mkdtempSync(join(tmpdir(), 'http-sink-'));
    writeFileSync(join(dir, 'token'), `${TOKEN}\n`);
    const sink = await openSink(base({ auth: { type: 'bearer', tokenFile: 'token' } }), { configDir: dir });
    await sink.write(makeEvents(1));
    expect(rx.requests[0]!.headers['authorization']).toBe(`Bearer ${TOKEN}`);
    await sink.close();
  });

  it('refuses plain http unless allowed', async () => {
    // The sink's config schema refuses it at load (so `validate` and the daemon's start do too).
    await expect(openSink(base({ allowInsecureHttp: false }))).rejects.toThrow(
      /uses plain http:\/\/; use https:\/\/ or set allowInsecureHttp: true/,
    );
  });
});
