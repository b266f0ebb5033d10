import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { formatIndex } from '../../../src/audit/sinks/elasticsearch/index-pattern.ts';
import { startBulkReceiver, type BulkReceiver } from '../../helpers/receivers/bulk-receiver.ts';
import { FAST_RETRY, T0, makeEvent, makeEvents, memoryLogger, openSink, recordingObserver, rejectionOf } from './fixtures.ts';
import { eventDoc } from '../../../src/audit/event.ts';

const API_KEY = 'VnVhQ2ZHY0JDZGJrUW0tZTVhT3g6dWkybHAyYXhUTm1zeWFrdzl0dk5udw==';
let es: BulkReceiver;

beforeEach(async () => {
  es = await startBulkReceiver(`ApiKey ${API_KEY}`);
});
afterEach(async () => {
  await es.close();
});

function base(extra: Record<string, unknown> = {}) {
  return {
    name: 'es',
    type: 'elasticsearch' as const,
    url: es.url,
    allowInsecureHttp: true,
    retry: FAST_RETRY,
    auth: { type: 'api-key' as const, apiKey: API_KEY },
    ...extra,
  };
}

describe('elasticsearch sink', () => {
  it('creates each event with _id = event key in the index of its own date', async () => {
    const sink = await openSink(base());
    const late = makeEvent(9, {}, Date.UTC(2026, 0, 16, 0, 0, 1));
    const res = await sink.write([makeEvent(0), makeEvent(1), late]);
    expect(res).toEqual({ delivered: 3, rejected: [] });
    expect([...es.indices.keys()].sort()).toEqual(['platform-audit-2026.01.15', 'platform-audit-2026.01.16']);
    expect([...es.indices.get('platform-audit-2026.01.15')!.keys()]).toEqual(['evt-0', 'evt-1']);
    expect(es.indices.get('platform-audit-2026.01.16')!.get('evt-9')).toEqual(eventDoc(late));
    expect(es.http.requests[0]!.path).toBe('/_bulk');
    await sink.close();
  });

  it('is idempotent: the same batch twice leaves one copy and counts as delivered', async () => {
    const sink = await openSink(base());
    const events = makeEvents(5);
    expect((await sink.write(events)).delivered).toBe(5);
    expect(await sink.write(events)).toEqual({ delivered: 5, rejected: [] });
    expect(es.count()).toBe(5);
    expect(sink.idempotent).toBe(true);
    await sink.close();
  });

  it('handles a mixed answer: 201, 409 (already there), 429 retried alone, mapper errors rejected', async () => {
    const sink = await openSink(base());
    await sink.write([makeEvent(1)]); // already in the index → 409 next time
    es.http.requests.length = 0;
    es.throttleOnce.add('evt-2');
    es.throttleOnce.add('evt-4');
    const observer = recordingObserver();
    const sink2 = await openSink(base(), { observer });
    const events = [makeEvent(0), makeEvent(1), makeEvent(2), makeEvent(3, { bad: 'x' }), makeEvent(4)];
    const res = await sink2.write(events);
    expect(res.delivered).toBe(4);
    expect(res.rejected.map((r) => [r.event.key, r.code])).toEqual([['evt-3', 'es_mapper_parsing_exception']]);
    expect(res.rejected[0]!.reason).toContain('failed to parse field [bad]');
    // The retry carried only the two throttled items.
    expect(es.http.requests).toHaveLength(2);
    const retried = es.http.requests[1]!.body.toString()
      .trimEnd()
      .split('\n')
      .filter((_, i) => i % 2 === 0);
    expect(retried.map((l) => (JSON.parse(l) as { create: { _id: string } }).create._id)).toEqual(['evt-2', 'evt-4']);
    expect(observer.retries).toHaveLength(1);
    expect(observer.retries[0]!.reason).toContain('2 throttled');
    expect(es.count()).toBe(4);
    await sink.close();
    await sink2.close();
  });

  it('retries a whole-request 429 with Retry-After and a 503, then delivers', async () => {
    es.script.push(
      { status: 429, headers: { 'retry-after': '0' }, body: { error: 'too many requests' } },
      { status: 503, body: { error: 'unavailable' } },
    );
    const sink = await openSink(base());
    expect((await sink.write(makeEvents(2))).delivered).toBe(2);
    expect(es.http.requests).toHaveLength(3);
    expect(es.count()).toBe(2);
    await sink.close();
  });

  it('gives up with a transient error when items stay throttled past the budget', async () => {
    const sink = await openSink(base({ retry: { ...FAST_RETRY, maxAttempts: 2 } }));
    es.script.push({ status: 503 }, { status: 503 });
    const err = await rejectionOf(sink.write(makeEvents(1)));
    expect(err.kind).toBe('transient');
    await sink.close();
  });

  it('stops fatally on a wrong API key without echoing it', async () => {
    const log = memoryLogger();
    const sink = await openSink(base({ auth: { type: 'api-key', apiKey: 'bm9wZTpub3Bl-wrong' } }), { logger: log.logger });
    const err = await rejectionOf(sink.write(makeEvents(1)));
    expect(err).toMatchObject({ kind: 'fatal', code: 'E_AUTH_INVALID' });
    expect(err.message).not.toContain('bm9wZTpub3Bl-wrong');
    expect(log.text()).not.toContain('bm9wZTpub3Bl-wrong');
    await sink.close();
  });

  it('sends basic auth, gzip and an ingest pipeline when configured', async () => {
    es.authorization = `Basic ${Buffer.from('elastic:changeme-secret').toString('base64')}`;
    const sink = await openSink(
      base({
        auth: { type: 'basic', username: 'elastic', password: 'changeme-secret' },
        compression: 'gzip',
        pipeline: 'audit-pipe',
        flavor: 'opensearch',
      }),
    );
    expect((await sink.write(makeEvents(3))).delivered).toBe(3);
    expect(es.http.requests[0]!.path).toBe('/_bulk?pipeline=audit-pipe');
    expect(es.http.requests[0]!.headers['content-encoding']).toBe('gzip');
    await sink.close();
  });

  it('formats Logstash-style date patterns from the event time (UTC)', () => {
    expect(formatIndex('audit-%{+yyyy.MM.dd}', T0)).toBe('audit-2026.01.15');
    expect(formatIndex('audit-%{+yy-MM}-%{+HH}', Date.UTC(2030, 11, 31, 23, 59))).toBe('audit-30-12-23');
    expect(formatIndex('static', T0)).toBe('static');
  });
});
