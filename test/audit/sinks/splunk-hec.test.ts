import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startHecReceiver, type HecReceiver } from '../../helpers/receivers/hec-receiver.ts';
import { FAST_RETRY, makeEvent, makeEvents, memoryLogger, openSink, recordingObserver, rejectionOf } from './fixtures.ts';
import { eventDoc } from '../../../src/audit/event.ts';

const TOKEN = '11111111-2222-3333-4444-555555555555';
let hec: HecReceiver;

beforeEach(async () => {
  hec = await startHecReceiver(TOKEN);
});
afterEach(async () => {
  await hec.close();
});

function base(extra: Record<string, unknown> = {}) {
  return {
    name: 'splunk',
    type: 'splunk-hec' as const,
    url: hec.url,
    token: TOKEN,
    allowInsecureHttp: true,
    retry: FAST_RETRY,
    index: 'audit',
    sourcetype: '_json',
    ...extra,
  };
}

describe('splunk-hec sink', () => {
  it('sends HEC event envelopes with epoch-second times, the Splunk token and a channel', async () => {
    const sink = await openSink(base());
    const events = makeEvents(3);
    expect(await sink.write(events)).toEqual({ delivered: 3, rejected: [] });
    expect(hec.events).toHaveLength(3);
    expect(hec.events[0]).toEqual({
      time: events[0]!.timestampMs / 1000,
      source: 'scim-audit-sync',
      sourcetype: '_json',
      index: 'audit',
      event: eventDoc(events[0]!),
    });
    expect(hec.http.requests[0]!.path).toBe('/services/collector/event');
    expect(hec.http.requests[0]!.headers['authorization']).toBe(`Splunk ${TOKEN}`);
    expect(hec.channels.size).toBe(1);
    await sink.close();
  });

  it('bounds requests by bytes and gzips them', async () => {
    const sink = await openSink(base({ compression: 'gzip', batch: { maxBytes: 2048 } }));
    const events = makeEvents(40);
    expect((await sink.write(events)).delivered).toBe(40);
    expect(hec.http.requests.length).toBeGreaterThan(2);
    for (const r of hec.http.requests) {
      expect(r.headers['content-encoding']).toBe('gzip');
      expect(r.body.length).toBeLessThanOrEqual(2048);
    }
    expect(hec.events.map((e) => e.event['event.id'])).toEqual(events.map((e) => eventDoc(e)['event.id']));
    await sink.close();
  });

  it('rejects only the event HEC names in invalid-event-number and delivers all the others', async () => {
    const sink = await openSink(base());
    const events = [
      makeEvent(0),
      makeEvent(1),
      makeEvent(2, { poison: true }),
      makeEvent(3),
      makeEvent(4, { poison: 'again' }),
      makeEvent(5),
    ];
    const res = await sink.write(events);
    expect(res.delivered).toBe(4);
    expect(res.rejected.map((r) => [r.event.key, r.code])).toEqual([
      ['evt-2', 'hec_invalid_data_format'],
      ['evt-4', 'hec_invalid_data_format'],
    ]);
    expect(res.rejected[0]!.reason).toContain('Invalid data format');
    // Nothing good lost: every good event reached the receiver.
    expect(hec.events.map((e) => e.event['event.id']).sort()).toEqual(['evt-0', 'evt-1', 'evt-3', 'evt-5']);
    await sink.close();
  });

  it('rejects the whole request for an incorrect index (code 7)', async () => {
    hec.script.push({ status: 400, body: { text: 'Incorrect index', code: 7, 'invalid-event-number': 0 } });
    const sink = await openSink(base());
    const res = await sink.write(makeEvents(3));
    expect(res.delivered).toBe(0);
    expect(res.rejected.map((r) => r.code)).toEqual(['hec_incorrect_index', 'hec_incorrect_index', 'hec_incorrect_index']);
    expect(hec.http.requests).toHaveLength(1);
    await sink.close();
  });

  it('retries server busy (code 9, 503) and internal error (code 8)', async () => {
    hec.script.push(
      { status: 503, body: { text: 'Server is busy', code: 9 } },
      { status: 500, body: { text: 'Internal server error', code: 8 } },
    );
    const observer = recordingObserver();
    const sink = await openSink(base(), { observer });
    expect((await sink.write(makeEvents(2))).delivered).toBe(2);
    expect(observer.retries.map((r) => r.reason)).toEqual([
      'HTTP 503 HEC code 9 (Server is busy)',
      'HTTP 500 HEC code 8 (Internal server error)',
    ]);
    expect(hec.events).toHaveLength(2);
    await sink.close();
  });

  it('stops fatally on an invalid token without revealing it', async () => {
    const log = memoryLogger();
    const sink = await openSink(base({ token: 'wrong-token-value-xyz' }), { logger: log.logger });
    const err = await rejectionOf(sink.write(makeEvents(1)));
    expect(err.kind).toBe('fatal');
    expect(err.code).toBe('E_AUTH_FORBIDDEN');
    expect(err.message).not.toContain('wrong-token-value-xyz');
    expect(log.text()).not.toContain('wrong-token-value-xyz');
    expect(hec.http.requests).toHaveLength(1);
    await sink.close();
  });

  it('maps data-channel and ack-disabled codes to a fatal configuration error', async () => {
    hec.script.push({ status: 400, body: { text: 'Data channel is missing', code: 10 } });
    const sink = await openSink(base());
    const err = await rejectionOf(sink.write(makeEvents(1)));
    expect(err).toMatchObject({ kind: 'fatal', code: 'E_CONFIG_INVALID' });
    expect(err.message).toContain('channel');
    await sink.close();
  });

  describe('indexer acknowledgement', () => {
    it('acknowledges only after the ack endpoint reports the batch indexed', async () => {
      hec.ack.enabled = true;
      hec.ack.pollsBeforeTrue = 2;
      const channel = '0b7c5f0e-8a57-4a3e-9a5c-6f2b1d9e4c21';
      const sink = await openSink(base({ channel, indexerAcknowledgement: { enabled: true, pollIntervalMs: 10, timeoutSeconds: 5 } }));
      expect((await sink.write(makeEvents(2))).delivered).toBe(2);
      expect(hec.ackPolls).toBe(3);
      const ackReq = hec.http.requests.find((r) => r.path.startsWith('/services/collector/ack'))!;
      expect(ackReq.path).toBe(`/services/collector/ack?channel=${channel}`);
      expect(ackReq.headers['x-splunk-request-channel']).toBe(channel);
      expect(JSON.parse(ackReq.body.toString())).toEqual({ acks: [0] });
      await sink.close();
    });

    it('resends the batch when the ack does not come in time, then gives up transiently', async () => {
      hec.ack.enabled = true;
      hec.ack.never = true;
      const sink = await openSink(
        base({
          retry: { ...FAST_RETRY, maxAttempts: 2 },
          indexerAcknowledgement: { enabled: true, pollIntervalMs: 10, timeoutSeconds: 0.1 },
        }),
      );
      const err = await rejectionOf(sink.write(makeEvents(1)));
      expect(err.kind).toBe('transient');
      expect(err.message).toContain('indexer acknowledgement');
      // Sent twice (at-least-once): the first copy might still get indexed later.
      expect(hec.http.requests.filter((r) => r.path === '/services/collector/event')).toHaveLength(2);
      await sink.close();
    });

    it('fails fatally when the token has acknowledgement disabled', async () => {
      const sink = await openSink(base({ indexerAcknowledgement: { enabled: true, pollIntervalMs: 10, timeoutSeconds: 1 } }));
      const err = await rejectionOf(sink.write(makeEvents(1)));
      expect(err).toMatchObject({ kind: 'fatal', code: 'E_CONFIG_INVALID' });
      expect(err.message).toContain('indexer acknowledgement is disabled on the HEC token');
      await sink.close();
    });
  });
});
