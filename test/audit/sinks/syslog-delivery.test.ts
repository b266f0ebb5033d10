/**
 * Syslog delivery rules against the project's own receivers over real sockets: what a broken
 * connection carried is sent again and counted; RELP counts only answered messages, rejects
 * what the receiver refuses and resends what it left unanswered; messages fit
 * `maxMessageBytes` (truncated with a marker, or dead-lettered); the RELP frame reader
 * refuses what is not RELP.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { eventDoc, type AuditEvent } from '../../../src/audit/event.ts';
import { sinkResentEvents, sinkTruncatedEvents } from '../../../src/audit/sinks/metrics.ts';
import { probeSink } from '../../../src/audit/sinks/probe.ts';
import { sinkConfigSchema } from '../../../src/audit/sinks/registry.ts';
import { escapeCefValue } from '../../../src/audit/sinks/syslog/cef.ts';
import type { SyslogFormat } from '../../../src/audit/sinks/syslog/encoder.ts';
import { fitMessage } from '../../../src/audit/sinks/syslog/fit.ts';
import { RelpParser, RelpProtocolError, encodeRelpFrame } from '../../../src/audit/sinks/syslog/relp/frame.ts';
import { startRelpReceiver, type RelpReceiver } from '../../helpers/receivers/relp-receiver.ts';
import { startSyslogReceiver, type SyslogReceiver } from '../../helpers/receivers/syslog-receiver.ts';
import { FAST_RETRY, makeEvent, makeEvents, openSink, rejectionOf } from './fixtures.ts';

async function counter(c: typeof sinkResentEvents, sink: string): Promise<number> {
  const m = await c.get();
  return m.values.filter((v) => v.labels['sink'] === sink).reduce((s, v) => s + v.value, 0);
}

const keyOf = (m: string): string | undefined => /key="([^"]*)"/.exec(m)?.[1];

describe('syslog over TCP: what a broken connection carried', () => {
  let rx: SyslogReceiver;
  afterEach(async () => {
    await rx.close();
  });

  it('resends every message written on a connection the receiver reset mid-batch, and counts them', async () => {
    rx = await startSyslogReceiver();
    rx.resetFirstAfter = 30;
    const sink = await openSink({
      name: 'tcp-reset',
      type: 'syslog',
      protocol: 'tcp',
      host: '127.0.0.1',
      port: rx.port,
      retry: FAST_RETRY,
    });
    const events = makeEvents(100);
    expect(await sink.write(events)).toEqual({ delivered: 100, rejected: [] });
    await sink.close();
    expect(rx.connections).toBe(2);
    // The second connection carried the whole batch again; the first one's 30 are the duplicates.
    expect(rx.messages.slice(30).map(keyOf)).toEqual(events.map((e) => e.key));
    expect(await counter(sinkResentEvents, 'tcp-reset')).toBe(100);
  });

  it('acknowledges a batch only after the receiver closed the connection in answer (one connection per request)', async () => {
    rx = await startSyslogReceiver();
    const sink = await openSink({
      name: 'tcp-commit',
      type: 'syslog',
      protocol: 'tcp',
      host: '127.0.0.1',
      port: rx.port,
      retry: FAST_RETRY,
    });
    await sink.write(makeEvents(3));
    // Resolved: the receiver has read all three (it closed after reading to the end).
    expect(rx.messages).toHaveLength(3);
    expect(rx.open()).toBe(0);
    await sink.write(makeEvents(3, 3));
    expect(rx.messages).toHaveLength(6);
    expect(rx.connections).toBe(2);
    await sink.close();
  });

  it('fails the attempt when the receiver never closes in answer, and gives up transiently', async () => {
    rx = await startSyslogReceiver();
    rx.stallConnections = 10;
    const sink = await openSink({
      name: 'tcp-stall',
      type: 'syslog',
      protocol: 'tcp',
      host: '127.0.0.1',
      port: rx.port,
      timeoutSeconds: 0.2,
      whenDown: 'fail',
      retry: { ...FAST_RETRY, maxAttempts: 2 },
    });
    const err = await rejectionOf(sink.write(makeEvents(2)));
    expect(err).toMatchObject({ kind: 'transient', code: 'E_TIMEOUT' });
    expect(err.message).toContain('did not close');
    await sink.close();
  });

  it('dead-letters a request the receiver never confirmed, then delivers again once it closes in answer', async () => {
    rx = await startSyslogReceiver();
    rx.stallConnections = 2;
    const sink = await openSink({
      name: 'tcp-stall-dl',
      type: 'syslog',
      protocol: 'tcp',
      host: '127.0.0.1',
      port: rx.port,
      timeoutSeconds: 0.2,
      retry: { ...FAST_RETRY, maxAttempts: 2 },
    });
    const down = await sink.write(makeEvents(3));
    expect(down.delivered).toBe(0);
    expect(down.rejected.map((r) => [r.event.key, r.code])).toEqual(makeEvents(3).map((e) => [e.key, 'syslog_unreachable']));
    expect(down.rejected[0]?.reason).toContain('did not close');
    // The third connection is answered: the receiver is back, nothing is dead-lettered.
    expect(await sink.write(makeEvents(2, 3))).toEqual({ delivered: 2, rejected: [] });
    await sink.close();
    expect(rx.connections).toBe(3);
  });
});

describe('syslog over RELP (scripted receiver)', () => {
  let rx: RelpReceiver;
  afterEach(async () => {
    await rx.close();
  });

  it('delivers on 200 answers and closes the session cleanly', async () => {
    rx = await startRelpReceiver();
    const sink = await openSink({ name: 'relp-ok', type: 'syslog', protocol: 'relp', host: '127.0.0.1', port: rx.port, retry: FAST_RETRY });
    expect(await sink.write(makeEvents(300))).toEqual({ delivered: 300, rejected: [] });
    expect(await sink.write(makeEvents(5, 300))).toEqual({ delivered: 5, rejected: [] });
    await sink.close();
    expect(rx.sessions).toBe(1);
    expect(rx.messages.map(keyOf)).toEqual(makeEvents(305).map((e) => e.key));
  });

  it('rejects (dead-letters) exactly the messages the receiver answers with an error status', async () => {
    rx = await startRelpReceiver();
    rx.script = (m) => (m.includes('key="evt-2"') ? '500 message refused' : '200 OK');
    const sink = await openSink({
      name: 'relp-500',
      type: 'syslog',
      protocol: 'relp',
      host: '127.0.0.1',
      port: rx.port,
      retry: FAST_RETRY,
    });
    const res = await sink.write(makeEvents(4));
    await sink.close();
    expect(res.delivered).toBe(3);
    expect(res.rejected.map((r) => [r.event.key, r.code, r.reason])).toEqual([
      ['evt-2', 'relp_500', 'the receiver answered 500 message refused'],
    ]);
  });

  it('after a serverclose, resends on a new session only what was left unanswered', async () => {
    rx = await startRelpReceiver();
    rx.script = (_m, i) => (i === 10 ? 'serverclose' : '200 OK');
    const sink = await openSink({
      name: 'relp-close',
      type: 'syslog',
      protocol: 'relp',
      host: '127.0.0.1',
      port: rx.port,
      relp: { windowSize: 1 },
      retry: FAST_RETRY,
    });
    expect((await sink.write(makeEvents(20))).delivered).toBe(20);
    await sink.close();
    expect(rx.sessions).toBe(2);
    // evt-10 reached the receiver unanswered and went again: the one possible duplicate.
    expect(rx.messages.map(keyOf)).toEqual([...makeEvents(11).map((e) => e.key), ...makeEvents(10, 10).map((e) => e.key)]);
    expect(await counter(sinkResentEvents, 'relp-close')).toBe(1);
  });

  it('dead-letters only the messages left unanswered when the receiver goes silent for good', async () => {
    rx = await startRelpReceiver();
    rx.script = (_m, i) => (i < 5 ? '200 OK' : 'silent');
    const sink = await openSink({
      name: 'relp-gone',
      type: 'syslog',
      protocol: 'relp',
      host: '127.0.0.1',
      port: rx.port,
      relp: { windowSize: 1 },
      timeoutSeconds: 0.2,
      retry: { ...FAST_RETRY, maxAttempts: 2 },
    });
    const res = await sink.write(makeEvents(12));
    await sink.close();
    expect(res.delivered).toBe(5);
    expect(res.rejected.map((r) => [r.event.key, r.code])).toEqual(makeEvents(7, 5).map((e) => [e.key, 'syslog_unreachable']));
  });

  it('is probed by a RELP open and close, without a message', async () => {
    rx = await startRelpReceiver();
    const c = sinkConfigSchema.parse({ name: 'relp-probe', type: 'syslog', protocol: 'relp', host: '127.0.0.1', port: rx.port });
    expect(await probeSink(c, process.cwd())).toMatchObject({ ok: true, detail: expect.stringContaining('RELP session accepted') });
    expect(rx.sessions).toBe(1);
    expect(rx.messages).toEqual([]);
  });

  it('breaks a silent session after the timeout and sends again', async () => {
    rx = await startRelpReceiver();
    rx.script = (_m, i) => (i === 0 ? 'silent' : '200 OK');
    const sink = await openSink({
      name: 'relp-silent',
      type: 'syslog',
      protocol: 'relp',
      host: '127.0.0.1',
      port: rx.port,
      timeoutSeconds: 0.2,
      retry: FAST_RETRY,
    });
    expect((await sink.write(makeEvents(1))).delivered).toBe(1);
    await sink.close();
    expect(rx.sessions).toBe(2);
  });
});

describe('messages within maxMessageBytes', () => {
  const format: SyslogFormat = {
    pri: 134,
    hostname: 'h',
    appName: 'app',
    procId: '1',
    msgidField: 'event.action',
    sdId: 'x@32473',
    format: 'json',
    cef: {
      vendor: 'v',
      product: 'p',
      version: '1',
      signatureIdField: 'event.action',
      nameField: 'event.action',
      severity: 3,
      extensions: { msg: 'note' },
      includeDocument: true,
    },
    framing: 'octet-counting',
  };
  const big: AuditEvent = makeEvent(1, { note: 'n'.repeat(20_000), small: 'kept', nested: { deep: 'd'.repeat(9000) } });

  it('leaves a message that fits untouched', () => {
    const e = makeEvent(2);
    const fit = fitMessage(e, format, 8192, 'truncate');
    expect('message' in fit && fit.truncatedFromBytes).toBeUndefined();
  });

  it('truncates the longest strings until the JSON message fits, keeping the rest and marking it', () => {
    const fit = fitMessage(big, format, 8192, 'truncate');
    if (!('message' in fit)) throw new Error('expected a message');
    const text = fit.message.toString('utf8');
    expect(fit.message.length).toBeLessThanOrEqual(8192);
    expect(fit.message.length).toBeGreaterThan(7000);
    expect(text).toContain(`truncated="${fit.truncatedFromBytes}"`);
    const doc = JSON.parse(text.slice(text.indexOf('] {') + 2)) as Record<string, unknown>;
    expect(doc['_truncated']).toBe(fit.truncatedFromBytes);
    expect(doc['small']).toBe('kept');
    expect(doc['event.id']).toBe('evt-1');
    expect(String(doc['note']).endsWith('…')).toBe(true);
    expect(Object.keys(doc).sort()).toEqual([...Object.keys(eventDoc(big)), '_truncated'].sort());
  });

  it('marks a truncated CEF line with cn1', () => {
    const fit = fitMessage(big, { ...format, format: 'cef' }, 4096, 'truncate');
    if (!('message' in fit)) throw new Error('expected a message');
    expect(fit.message.length).toBeLessThanOrEqual(4096);
    expect(fit.message.toString('utf8')).toMatch(/ cn1Label=truncatedFromBytes cn1=\d+$/);
  });

  it('reports an oversize message in dead-letter mode, and one whose header alone cannot fit', () => {
    expect(fitMessage(big, format, 8192, 'dead-letter')).toEqual({ oversizeBytes: expect.any(Number) });
    const hugeKey = { ...makeEvent(3), key: 'k'.repeat(5000) };
    expect(fitMessage(hugeKey, format, 2048, 'truncate')).toEqual({ oversizeBytes: expect.any(Number) });
  });

  it('counts truncations in the sink and dead-letters as syslog_oversize', async () => {
    const rx = await startSyslogReceiver();
    try {
      const base = { type: 'syslog', protocol: 'tcp', host: '127.0.0.1', port: rx.port, retry: FAST_RETRY } as const;
      const cut = await openSink({ ...base, name: 'fit-cut', maxMessageBytes: 4096 });
      expect(await cut.write([big, makeEvent(2)])).toEqual({ delivered: 2, rejected: [] });
      await cut.close();
      expect(await counter(sinkTruncatedEvents, 'fit-cut')).toBe(1);
      const dl = await openSink({ ...base, name: 'fit-dl', oversize: 'dead-letter' });
      const res = await dl.write([big, makeEvent(2)]);
      await dl.close();
      expect(res.delivered).toBe(1);
      expect(res.rejected[0]).toMatchObject({ code: 'syslog_oversize' });
      expect(res.rejected[0]?.reason).toMatch(/^message of \d+ bytes exceeds maxMessageBytes 8192/);
    } finally {
      await rx.close();
    }
  });
});

describe('RELP frames', () => {
  it('reads frames split anywhere, with and without data', () => {
    const bytes = Buffer.concat([
      encodeRelpFrame(1, 'rsp', Buffer.from('200 OK')),
      encodeRelpFrame(0, 'serverclose'),
      encodeRelpFrame(7, 'rsp', Buffer.from('a\nb')),
    ]);
    for (let cut = 0; cut <= bytes.length; cut++) {
      const p = new RelpParser(1024);
      const frames = [...p.push(bytes.subarray(0, cut)), ...p.push(bytes.subarray(cut))];
      expect(frames.map((f) => [f.txnr, f.command, f.data.toString()])).toEqual([
        [1, 'rsp', '200 OK'],
        [0, 'serverclose', ''],
        [7, 'rsp', 'a\nb'],
      ]);
    }
  });

  it('refuses what is not RELP, a wrong trailer and data past the bound', () => {
    expect(() => new RelpParser(1024).push(Buffer.from('HTTP/1.1 400 Bad Request\r\n'))).toThrow(RelpProtocolError);
    expect(() => new RelpParser(1024).push(Buffer.from('1 rsp 2 okX'))).toThrow(RelpProtocolError);
    expect(() => new RelpParser(10).push(Buffer.from('1 rsp 11 '))).toThrow(RelpProtocolError);
    expect(() => new RelpParser(1024).push(Buffer.from('1'.repeat(60)))).toThrow(RelpProtocolError);
  });
});

describe('CEF control characters', () => {
  it('writes NUL, other controls and the Unicode line separators as \\uXXXX', () => {
    expect(escapeCefValue('a\0b\x07c\x85d\u2028e\u2029f\x7f')).toBe('a\\u0000b\\u0007c\\u0085d\\u2028e\\u2029f\\u007f');
  });
});
