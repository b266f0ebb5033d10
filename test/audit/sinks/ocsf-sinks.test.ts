/**
 * OCSF events (`fieldStyle: ocsf`) through the sinks that carry the document as is, to real
 * receivers: each event the receiver got validates against the vendored OCSF subset.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { EventBuilder } from '../../../src/audit/build-event.ts';
import type { AuditEvent } from '../../../src/audit/event.ts';
import { createTimestampParser } from '../../../src/audit/timestamp.ts';
import { startBulkReceiver, type BulkReceiver } from '../../helpers/receivers/bulk-receiver.ts';
import { startHecReceiver, type HecReceiver } from '../../helpers/receivers/hec-receiver.ts';
import { startSyslogReceiver, type SyslogReceiver } from '../../helpers/receivers/syslog-receiver.ts';
import { ocsfProblems } from '../support/ocsf-validate.ts';
import { FAST_RETRY, openSink } from './fixtures.ts';

const HEADER = ['Timestamp', 'Event Name', 'User Email', 'IP Address', 'User Agent', 'Details'];
const ROWS = [
  ['2026-01-15T10:00:00.000Z', 'Logged in', 'a@example.com', '203.0.113.7', 'curl/8', '{"method":"sso"}'],
  [
    '2026-01-15T10:00:01.000Z',
    'Added user to group via SCIM',
    'a@example.com',
    '2001:db8::1',
    '',
    '{"target":"b@example.com","group":"Ops"}',
  ],
  ['2026-01-15T10:00:02.000Z', 'Deactivated user via SCIM', '', 'host.example', 'ua', 'line\u2028two\u0000'],
  ['2026-01-15T10:00:03.000Z', 'Exported data', 'c@example.com', '198.51.100.2', 'Mozilla/5.0 ✓', ''],
  ['2026-01-15T10:00:04.000Z', 'Something new', 'é@example.com', '', '', '{"x":1}'],
];

function ocsfEvents(): AuditEvent[] {
  const b = new EventBuilder(HEADER, { fieldStyle: 'ocsf', overrides: {}, parseTimestamp: createTimestampParser('UTC') });
  return ROWS.map((row, i) => b.build(row, b.timestampOf(row) as number, `k${i}`));
}

let hec: HecReceiver | undefined;
let es: BulkReceiver | undefined;
let rx: SyslogReceiver | undefined;
afterEach(async () => {
  await hec?.close();
  await es?.close();
  await rx?.close();
  hec = es = rx = undefined;
});

describe('OCSF events through the sinks', () => {
  it('Splunk HEC: each envelope’s event is the OCSF event, and validates', async () => {
    const token = '11111111-2222-3333-4444-555555555555';
    hec = await startHecReceiver(token);
    const sink = await openSink({ name: 'splunk', type: 'splunk-hec', url: hec.url, token, allowInsecureHttp: true, retry: FAST_RETRY });
    expect(await sink.write(ocsfEvents())).toEqual({ delivered: ROWS.length, rejected: [] });
    await sink.close();
    expect(hec.events).toHaveLength(ROWS.length);
    for (const e of hec.events) expect(ocsfProblems(e.event)).toEqual([]);
    expect(hec.events.map((e) => e.event['class_uid'])).toEqual([3002, 3006, 3001, 6003, 6003]);
  });

  it('Elasticsearch: each created document is the OCSF event, and validates', async () => {
    es = await startBulkReceiver();
    const sink = await openSink({ name: 'es', type: 'elasticsearch', url: es.url, allowInsecureHttp: true, retry: FAST_RETRY });
    expect(await sink.write(ocsfEvents())).toEqual({ delivered: ROWS.length, rejected: [] });
    await sink.close();
    const docs = [...es.indices.values()].flatMap((m) => [...m.values()]);
    expect(docs).toHaveLength(ROWS.length);
    for (const d of docs) expect(ocsfProblems(d)).toEqual([]);
  });

  it('syslog JSON: MSG is the OCSF event (line-safe), MSGID its event name', async () => {
    rx = await startSyslogReceiver();
    const sink = await openSink({ name: 'siem', type: 'syslog', protocol: 'tcp', host: '127.0.0.1', port: rx.port, retry: FAST_RETRY });
    expect(await sink.write(ocsfEvents())).toEqual({ delivered: ROWS.length, rejected: [] });
    await sink.close();
    await expect.poll(() => rx!.messages.length).toBe(ROWS.length);
    for (const m of rx.messages) {
      const parsed = /^<\d+>1 \S+ \S+ \S+ \S+ (\S+) (?:\[[^\]]*\]|-) (.*)$/s.exec(m);
      expect(parsed).not.toBeNull();
      expect(parsed![2]).not.toMatch(/[\n\r\u2028]/);
      expect(ocsfProblems(JSON.parse(parsed![2]!))).toEqual([]);
    }
    expect(/^<\d+>1 \S+ \S+ \S+ \S+ (\S+)/.exec(rx.messages[0]!)![1]).toBe('Logged_in');
  });
});
