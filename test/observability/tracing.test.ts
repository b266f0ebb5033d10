/**
 * Tracing in one process: the SDK started from the standard OTEL_* variables exports to a real
 * OTLP/HTTP receiver on a loopback port, with the headers of OTEL_EXPORTER_OTLP_HEADERS_FILE;
 * log lines written inside a span carry its ids; the path templates and header files a span
 * relies on keep ids, queries and malformed input out.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/observability/logger.ts';
import { parseHeaderList, startTracing, tracingEndpoint } from '../../src/observability/tracing/start.ts';
import { pathTemplate } from '../../src/observability/tracing/path-template.ts';
import { withSpan } from '../../src/observability/tracing/spans.ts';
import { startOtlpReceiver, type OtlpReceiver } from '../helpers/receivers/otlp-receiver.ts';

const COLLECTOR_SECRET = 'otlp-collector-key-5c1d9e7a3b';

function capture(): { stream: Writable; lines: () => Array<Record<string, unknown>> } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      chunks.push(chunk.toString('utf8'));
      done();
    },
  });
  return {
    stream,
    lines: () =>
      chunks
        .join('')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

let receiver: OtlpReceiver;
let dir: string;
beforeAll(async () => {
  receiver = await startOtlpReceiver();
  dir = mkdtempSync(join(tmpdir(), 'tracing-'));
});
afterAll(async () => {
  await receiver.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('tracing in one process', () => {
  it('a log line written inside a span carries its trace_id and span_id, and the span reaches the OTLP receiver with the file headers', async () => {
    const headersFile = join(dir, 'otlp-headers');
    writeFileSync(headersFile, `x-collector-key=${encodeURIComponent(COLLECTOR_SECRET)}\n`);
    process.env['OTEL_EXPORTER_OTLP_ENDPOINT'] = receiver.url;
    process.env['OTEL_EXPORTER_OTLP_HEADERS_FILE'] = headersFile;
    process.env['OTEL_SERVICE_NAME'] = 'tracing-test';
    const out = capture();
    const logger = createLogger({ level: 'info', destination: out.stream });
    const tracing = await startTracing(logger);
    expect(tracing).toBeDefined();
    logger.info('outside any span');
    let traceId = '';
    await withSpan('reconcile run', { 'scimsync.tenant': 'acme' }, async (root) => {
      traceId = root.traceId;
      await withSpan('reconcile plan', { 'scimsync.tenant': 'acme' }, async () => {
        logger.info('inside the plan');
      });
    });
    await expect(
      withSpan('reconcile source read', {}, async () => {
        throw Object.assign(new Error('cannot read user ann@example.com'), { code: 'E_SOURCE_UNAVAILABLE' });
      }),
    ).rejects.toThrow(/ann@example.com/);
    // A job moved back to wait is not a failed run.
    class Delayed extends Error {}
    await expect(
      withSpan(
        'reconcile run',
        { 'scimsync.tenant': 'waiting' },
        async () => {
          throw new Delayed('waits for the running reconcile');
        },
        { root: true, expected: (e) => (e instanceof Delayed ? 'delayed' : undefined) },
      ),
    ).rejects.toThrow(Delayed);
    await tracing?.shutdown();

    const lines = out.lines();
    const outside = lines.find((l) => l['msg'] === 'outside any span');
    const inside = lines.find((l) => l['msg'] === 'inside the plan');
    expect(outside?.['trace_id']).toBeUndefined();
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(inside?.['trace_id']).toBe(traceId);
    const plan = receiver.spans.find((s) => s.name === 'reconcile plan');
    const run = receiver.spans.find((s) => s.name === 'reconcile run');
    expect(plan?.traceId).toBe(traceId);
    expect(inside?.['span_id']).toBe(plan?.spanId);
    expect(plan?.parentSpanId).toBe(run?.spanId);
    expect(run?.parentSpanId).toBe('');
    expect(run?.resource['service.name']).toBe('tracing-test');
    // A failed span says which code failed, never the message (it may quote a name).
    const failed = receiver.spans.find((s) => s.name === 'reconcile source read');
    expect(failed?.statusCode).toBe(2);
    expect(failed?.attributes['error.type']).toBe('E_SOURCE_UNAVAILABLE');
    const waiting = receiver.spans.find((s) => s.attributes['scimsync.tenant'] === 'waiting');
    expect(waiting?.statusCode).toBe(0);
    expect(waiting?.attributes['scimsync.result']).toBe('delayed');
    expect(waiting?.attributes['error.type']).toBeUndefined();
    const sent = receiver.requests.map((r) => r.body.toString('utf8')).join('\n');
    expect(sent).not.toContain('ann@example.com');
    // The collector's key came from the file, and is in no log line.
    expect(receiver.requests.every((r) => r.headers['x-collector-key'] === COLLECTOR_SECRET)).toBe(true);
    expect(JSON.stringify(lines)).not.toContain(COLLECTOR_SECRET);
    expect(lines.find((l) => l['msg'] === 'tracing: OTLP/HTTP exporter started')?.['endpoint']).toBe(`${receiver.url}/`);
  });

  it('tracing is off without an endpoint, with OTEL_SDK_DISABLED=true or with OTEL_TRACES_EXPORTER=none', () => {
    expect(tracingEndpoint({})).toBeUndefined();
    expect(tracingEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: ' ' })).toBeUndefined();
    expect(tracingEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'true' })).toBeUndefined();
    expect(tracingEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_EXPORTER: 'none' })).toBeUndefined();
    expect(tracingEndpoint({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/v1/traces' })).toBe('http://c:4318/v1/traces');
  });

  it('a headers file in the OTEL_EXPORTER_OTLP_HEADERS format is parsed, and a malformed one names the variable, not the value', () => {
    expect(parseHeaderList('Authorization=Basic%20YWJj, x-tenant=acme\n', 'f')).toEqual({
      authorization: 'Basic YWJj',
      'x-tenant': 'acme',
    });
    expect(() => parseHeaderList('just-a-secret-value', 'OTEL_EXPORTER_OTLP_HEADERS_FILE (f)')).toThrow(
      /OTEL_EXPORTER_OTLP_HEADERS_FILE \(f\): each entry must be key=value/,
    );
    try {
      parseHeaderList('just-a-secret-value', 'f');
    } catch (e) {
      expect((e as Error).message).not.toContain('just-a-secret-value');
    }
  });

  it('a request path becomes a template: object ids, names and the query are left out', () => {
    expect(pathTemplate('/api/scim/v2/Users/2819c223-7f76-453a?attributes=userName')).toBe('/api/scim/v2/Users/{id}');
    expect(pathTemplate('/api/scim/v2/Users?filter=userName%20eq%20%22ann%40example.com%22')).toBe('/api/scim/v2/Users');
    expect(pathTemplate('/api/scim/v2/Groups/engineering')).toBe('/api/scim/v2/Groups/{id}');
    expect(pathTemplate('/api/v1/user-attributes/ua-17')).toBe('/api/v1/user-attributes/{id}');
    expect(pathTemplate('/audit-2026.11/_bulk')).toBe('/{id}/_bulk');
    expect(pathTemplate('/services/collector/event')).toBe('/services/collector/event');
  });
});
