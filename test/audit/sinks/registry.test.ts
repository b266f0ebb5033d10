import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { chunkEvents } from '../../../src/audit/sinks/batcher.ts';
import { createSink, sinkConfigSchema, sinksConfigSchema } from '../../../src/audit/sinks/registry.ts';
import { registry } from '../../../src/observability/metrics.ts';
import { makeEvents, openSink } from './fixtures.ts';

const ctx = { configDir: '/tmp' };

describe('sink registry and config', () => {
  it('builds every sink type from config, with defaults applied', () => {
    const configs = sinksConfigSchema.parse([
      { name: 'out', type: 'stdout' },
      { name: 'archive', type: 'file', path: 'audit.ndjson' },
      { name: 'hook', type: 'http', url: 'https://collector.example.com/in' },
      { name: 'splunk', type: 'splunk-hec', url: 'https://splunk.example.com:8088', token: 't' },
      { name: 'es', type: 'elasticsearch', url: 'https://es.example.com:9200' },
      { name: 'siem', type: 'syslog', host: 'siem.example.com' },
    ]);
    const sinks = configs.map((c) => createSink(c, ctx));
    expect(sinks.map((s) => [s.name, s.type, s.idempotent])).toEqual([
      ['out', 'stdout', false],
      ['archive', 'file', true],
      ['hook', 'http', false],
      ['splunk', 'splunk-hec', false],
      ['es', 'elasticsearch', true],
      ['siem', 'syslog', false],
    ]);
    expect(configs[3]).toMatchObject({ batch: { maxEvents: 1000, maxBytes: 1_000_000 }, retry: { maxAttempts: 6, baseDelayMs: 200 } });
    expect(configs[4]).toMatchObject({ index: 'platform-audit-%{+yyyy.MM.dd}', flavor: 'elasticsearch' });
    expect(typeof (sinks[1] as { recentKeys?: unknown }).recentKeys).toBe('function');
  });

  it('refuses duplicate names, misspelled keys, missing secrets and bad index patterns with actionable messages', () => {
    const dup = sinksConfigSchema.safeParse([
      { name: 'a', type: 'stdout' },
      { name: 'a', type: 'stdout' },
    ]);
    expect(dup.error?.issues[0]?.message).toContain('duplicate sink name "a"');
    const typo = sinkConfigSchema.safeParse({ name: 'f', type: 'file', path: 'x', rotateMinutes: 5 });
    expect(typo.error?.issues[0]?.code).toBe('unrecognized_keys');
    const noToken = sinkConfigSchema.safeParse({ name: 's', type: 'splunk-hec', url: 'https://s' });
    expect(noToken.error?.issues[0]?.message).toContain('tokenFile');
    const index = sinkConfigSchema.safeParse({ name: 'e', type: 'elasticsearch', url: 'https://e', index: 'Audit-%{+yyyy}' });
    expect(index.error?.issues[0]?.message).toContain('lower-case');
    const name = sinkConfigSchema.safeParse({ name: 'Has Space', type: 'stdout' });
    expect(name.success).toBe(false);
  });

  it('refuses insecure or credential-bearing URLs in the schema (load time) and at build time, with the same rule', () => {
    const insecure = sinkConfigSchema.safeParse({ name: 'h', type: 'http', url: 'http://collector.internal/in' });
    expect(insecure.success ? [] : insecure.error.issues.map((i) => [i.path.join('.'), i.message])).toEqual([
      ['url', 'uses plain http://; use https:// or set allowInsecureHttp: true for a trusted network'],
    ]);
    const withCreds = sinkConfigSchema.safeParse({ name: 'e', type: 'elasticsearch', url: 'https://elastic:pw@es.internal' });
    expect(withCreds.success ? [] : withCreds.error.issues.map((i) => [i.path.join('.'), i.message])).toEqual([
      ['url', "must not contain credentials: use the sink's auth settings"],
    ]);
    // A config that skipped the schema is still refused by the sink's constructor.
    const http = {
      ...sinkConfigSchema.parse({ name: 'h', type: 'http', url: 'https://collector.internal/in' }),
      url: 'http://collector.internal/in',
    };
    expect(() => createSink(http, ctx)).toThrow(/allowInsecureHttp/);
    const creds = {
      ...sinkConfigSchema.parse({ name: 'e', type: 'elasticsearch', url: 'https://es.internal' }),
      url: 'https://elastic:pw@es.internal',
    };
    expect(() => createSink(creds, ctx)).toThrow(/must not contain credentials/);
  });

  it('a missing secret file fails open() naming the key, never a value', async () => {
    await expect(
      openSink({ name: 's', type: 'splunk-hec', url: 'https://s.example.com', tokenFile: 'nope/token' }, { configDir: '/tmp' }),
    ).rejects.toMatchObject({
      code: 'E_CONFIG_INVALID',
      message: expect.stringContaining('tokenFile cannot be read (ENOENT)'),
    });
  });

  it('splits batches by events and bytes, alone for an oversized event, rejecting what cannot be encoded', () => {
    const events = makeEvents(5);
    const sizes = [10, 10, 50, 10, 10];
    const chunks = [
      ...chunkEvents(
        events,
        (e) => {
          const i = Number(e.key.slice(4));
          if (i === 4) throw new Error('boom');
          return Buffer.alloc(sizes[i]!);
        },
        { maxEvents: 2, maxBytes: 30 },
      ),
    ];
    expect(chunks.map((c) => c.events.map((e) => e.key))).toEqual([['evt-0', 'evt-1'], ['evt-2'], ['evt-3']]);
    expect(chunks.flatMap((c) => c.rejected.map((r) => [r.event.key, r.code]))).toEqual([['evt-4', 'encode_failed']]);
  });

  it('records low-cardinality metrics labelled by sink name, type and result only', async () => {
    const out = new PassThrough();
    out.resume();
    const sink = await openSink({ name: 'metrics-probe', type: 'stdout' }, { stdout: out });
    await sink.write(makeEvents(3));
    const text = await registry.metrics();
    expect(text).toMatch(/scimsync_audit_sink_requests_total\{sink="metrics-probe",type="stdout",result="ok"\} 1/);
    expect(text).toMatch(/scimsync_audit_sink_events_total\{sink="metrics-probe",type="stdout",outcome="delivered"\} 3/);
    expect(text).toMatch(/scimsync_audit_sink_batch_events_bucket\{le="10",sink="metrics-probe",type="stdout"\} 1/);
    expect(text).toContain('scimsync_audit_sink_request_duration_seconds_count{sink="metrics-probe",type="stdout"} 1');
    expect(text).not.toContain('evt-');
    expect(text).not.toContain('@example.com');
  });
});
