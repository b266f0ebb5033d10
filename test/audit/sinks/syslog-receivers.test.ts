/**
 * The syslog sink against real receivers started by the test: Debian's rsyslog (imtcp, imtcp
 * with gtls, imrelp) and syslog-ng (the syslog() source over TCP and TLS), each restarted in
 * the middle of an export and fed oversize events. What counts is what the daemon wrote to
 * its output file across both of its runs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEvent } from '../../../src/audit/event.ts';
import { sinkResentEvents, sinkTruncatedEvents } from '../../../src/audit/sinks/metrics.ts';
import type { SinkConfigInput } from '../../../src/audit/sinks/registry.ts';
import type { Sink } from '../../../src/audit/sinks/sink.ts';
import type { RealReceiver } from '../../helpers/receivers/real-receiver.ts';
import { startRsyslog, type Rsyslog } from '../../helpers/receivers/rsyslog.ts';
import { startSyslogNg, type SyslogNg } from '../../helpers/receivers/syslog-ng.ts';
import { makeEvent, openSink } from './fixtures.ts';
import { HOUR, T0, createHarness, expectedIds } from '../support/harness.ts';

/** Patient retries (about 20 s in all): a restart takes the receiver away for up to seconds on a loaded machine. */
const RESTART_RETRY = { maxAttempts: 50, baseDelayMs: 20, maxDelayMs: 500, maxRetryAfterSeconds: 1 };

async function counter(c: typeof sinkResentEvents, sink: string): Promise<number> {
  const m = await c.get();
  return m.values.filter((v) => v.labels['sink'] === sink).reduce((s, v) => s + v.value, 0);
}

function events(n: number, from = 0, pad = 300): AuditEvent[] {
  return Array.from({ length: n }, (_, i) => makeEvent(from + i, { pad: 'p'.repeat(pad) }));
}

/**
 * Writes `batches` batches of `size` events in order (as the export does) and restarts the
 * receiver while batch `restartAt` is being written; returns the delivered count.
 */
async function exportWithRestart(
  sink: Sink,
  rx: RealReceiver,
  o: { batches: number; size: number; restartAt: number; from: number; signal: 'SIGTERM' | 'SIGKILL' },
): Promise<number> {
  let delivered = 0;
  let restart: Promise<void> | undefined;
  for (let b = 0; b < o.batches; b++) {
    const write = sink.write(events(o.size, o.from + b * o.size));
    if (b === o.restartAt) restart = rx.restart(o.signal);
    delivered += (await write).delivered;
  }
  await restart;
  return delivered;
}

let nextFrom = 1_000_000;

/**
 * An export of 12 × 500 events (keys of their own) with a receiver restart during the fifth
 * batch: the distinct keys and the lines the receiver wrote for it, and the resends counted.
 */
async function restartScenario(
  rx: RealReceiver,
  raw: Extract<SinkConfigInput, { type: 'syslog' }>,
  signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM',
): Promise<{ distinct: number; lines: number; resent: number }> {
  const [batches, size] = [12, 500];
  const from = nextFrom;
  nextFrom += 1_000_000;
  const before = rx.lines().length;
  // Jitter pinned to the full step, so the budget is a known time.
  const sink = await openSink({ ...raw, retry: RESTART_RETRY, timeoutSeconds: 10 }, { random: () => 1 });
  const delivered = await exportWithRestart(sink, rx, { batches, size, restartAt: 4, from, signal });
  await sink.close();
  expect(delivered).toBe(batches * size);
  let keys: string[] = [];
  const deadline = Date.now() + 10_000;
  do {
    keys = rx.keys().slice(before);
    if (new Set(keys).size >= batches * size) break;
    await new Promise((r) => setTimeout(r, 50));
  } while (Date.now() < deadline);
  expect(keys.every((k) => Number(k.slice(4)) >= from && Number(k.slice(4)) < from + batches * size)).toBe(true);
  return { distinct: new Set(keys).size, lines: keys.length, resent: await counter(sinkResentEvents, raw.name) };
}

/** 10 small events, a 12 KiB one, a 70 KiB one, then 24 small ones: the batch rsyslog and syslog-ng cut. */
function oversizeBatch(from: number): AuditEvent[] {
  return [
    ...events(10, from),
    makeEvent(from + 10, { pad: 'a'.repeat(12 * 1024) }),
    makeEvent(from + 11, { pad: 'b'.repeat(70 * 1024), note: 'kept' }),
    ...events(24, from + 12),
  ];
}

/** The JSON body of a raw RFC 5424 line (after the structured data). */
function bodyOf(line: string): Record<string, unknown> {
  return JSON.parse(line.slice(line.indexOf('] {') + 2)) as Record<string, unknown>;
}

describe('syslog sink against rsyslog', () => {
  let rs: Rsyslog;
  beforeAll(async () => {
    rs = await startRsyslog();
  });
  afterAll(async () => {
    await rs?.receiver.stop();
  });

  it('loses no event over plain TCP when rsyslog restarts mid-export (resends counted)', async () => {
    const r = await restartScenario(rs.receiver, { name: 'rs-tcp', type: 'syslog', protocol: 'tcp', host: '127.0.0.1', port: rs.tcpPort });
    expect(r.distinct).toBe(6000);
    // Every extra line is a resend the metric counted.
    expect(r.lines - r.distinct).toBeLessThanOrEqual(r.resent);
  });

  it('loses no event over TLS (gtls) when rsyslog restarts mid-export', async () => {
    const r = await restartScenario(rs.receiver, {
      name: 'rs-tls',
      type: 'syslog',
      protocol: 'tls',
      host: '127.0.0.1',
      port: rs.tlsPort,
      tls: { caFile: rs.ca.caFile },
    });
    expect(r.distinct).toBe(6000);
    expect(r.lines - r.distinct).toBeLessThanOrEqual(r.resent);
  });

  it('loses no event over RELP when rsyslog restarts mid-export, resending only what was unanswered', async () => {
    const r = await restartScenario(rs.receiver, {
      name: 'rs-relp',
      type: 'syslog',
      protocol: 'relp',
      host: '127.0.0.1',
      port: rs.relpPort,
    });
    expect(r.distinct).toBe(6000);
    expect(r.lines - r.distinct).toBeLessThanOrEqual(r.resent);
  });

  it('an export through the engine loses no event when rsyslog restarts in the middle of it', async () => {
    const h = await createHarness({ plain: false });
    try {
      const inner = await openSink(
        {
          name: 'rs-export',
          type: 'syslog',
          protocol: 'tcp',
          host: '127.0.0.1',
          port: rs.tcpPort,
          retry: { maxAttempts: 50, baseDelayMs: 20, maxDelayMs: 500 },
        },
        { random: () => 1 },
      );
      let writes = 0;
      let restart: Promise<void> | undefined;
      // The engine's own sink, restarting the receiver as its 10th batch goes out.
      const sink: Sink = {
        name: inner.name,
        type: inner.type,
        idempotent: inner.idempotent,
        open: () => inner.open(),
        close: () => inner.close(),
        write: (batch, signal) => {
          if (++writes === 10) restart = rs.receiver.restart('SIGTERM');
          return inner.write(batch, signal);
        },
      };
      const before = rs.receiver.lines().length;
      const summary = await h.run({}, { sinks: [sink] });
      await restart;
      const expected = expectedIds(h.sim, T0, T0 + 6 * HOUR);
      expect(writes).toBeGreaterThan(20);
      expect(summary.delivered['rs-export']).toBe(expected.length);
      const deadline = Date.now() + 10_000;
      let got = new Set<string>();
      while (got.size < expected.length && Date.now() < deadline) {
        got = new Set(rs.receiver.keys().slice(before));
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(expected.filter((k) => !got.has(k))).toEqual([]);
    } finally {
      await h.close();
    }
  });

  it('truncates a 12 KiB and a 70 KiB event to 8 KiB with a marker: one whole line per event in rsyslog, none cut', async () => {
    const before = rs.receiver.lines().length;
    const sink = await openSink({ name: 'rs-big', type: 'syslog', protocol: 'tcp', host: '127.0.0.1', port: rs.tcpPort });
    const batch = oversizeBatch(200_000);
    expect(await sink.write(batch)).toEqual({ delivered: 36, rejected: [] });
    await sink.close();
    const lines = (await rs.receiver.waitForLines(before + 36)).slice(before);
    expect(lines).toHaveLength(36);
    expect(lines.map((l) => /key="([^"]*)"/.exec(l)?.[1])).toEqual(batch.map((e) => e.key));
    const big = lines.filter((l) => l.includes(' truncated="'));
    expect(big).toHaveLength(2);
    for (const l of big) {
      expect(Buffer.byteLength(l)).toBeLessThanOrEqual(8192);
      const doc = bodyOf(l);
      expect(doc['_truncated']).toBeGreaterThan(8192);
      expect(doc['event.id']).toMatch(/^evt-2000(10|11)$/);
    }
    expect(bodyOf(big[1]!)['note']).toBe('kept');
    expect(await counter(sinkTruncatedEvents, 'rs-big')).toBe(2);
  });

  it('dead-letters oversize events instead when oversize is dead-letter', async () => {
    const before = rs.receiver.lines().length;
    const sink = await openSink({
      name: 'rs-big-dl',
      type: 'syslog',
      protocol: 'tcp',
      host: '127.0.0.1',
      port: rs.tcpPort,
      oversize: 'dead-letter',
    });
    const res = await sink.write(oversizeBatch(300_000));
    await sink.close();
    expect(res.delivered).toBe(34);
    expect(res.rejected.map((r) => [r.event.key, r.code])).toEqual([
      ['evt-300010', 'syslog_oversize'],
      ['evt-300011', 'syslog_oversize'],
    ]);
    expect((await rs.receiver.waitForLines(before + 34)).slice(before)).toHaveLength(34);
  });

  it('frames by LF when asked, one line per event even with line breaks in the key and document', async () => {
    const before = rs.receiver.lines().length;
    const sink = await openSink({ name: 'rs-lf', type: 'syslog', protocol: 'tcp', host: '127.0.0.1', port: rs.tcpPort, framing: 'lf' });
    const nasty = [0, 1, 2, 3].map((i) => {
      const e = makeEvent(400_000 + i, { note: `a\nb\r\nc\u2028d\u0085e\u0000f` });
      return { ...e, key: `lf-${i}\nline` };
    });
    expect((await sink.write(nasty)).delivered).toBe(4);
    await sink.close();
    const lines = (await rs.receiver.waitForLines(before + 4)).slice(before);
    expect(lines).toHaveLength(4);
    expect(lines.map((l) => bodyOf(l)['note'])).toEqual(nasty.map(() => 'a\nb\r\nc\u2028d\u0085e\u0000f'));
  });

  it('delivers over RELP inside TLS (imrelp tls="on"), verifying the receiver against the CA', async () => {
    const before = rs.receiver.lines().length;
    const sink = await openSink({
      name: 'rs-relp-tls',
      type: 'syslog',
      protocol: 'relp',
      relp: { tls: true },
      host: '127.0.0.1',
      port: rs.relpTlsPort,
      // Mutual TLS, as librelp requires: the test CA's certificate serves as the client's too.
      tls: { caFile: rs.ca.caFile, certFile: rs.ca.certFile, keyFile: rs.ca.keyFile },
    });
    expect((await sink.write(events(50, 600_000))).delivered).toBe(50);
    await sink.close();
    expect((await rs.receiver.waitForLines(before + 50)).slice(before)).toHaveLength(50);
  });

  it('delivers over RELP without a duplicate when nothing breaks', async () => {
    const before = rs.receiver.lines().length;
    const sink = await openSink({ name: 'rs-relp-calm', type: 'syslog', protocol: 'relp', host: '127.0.0.1', port: rs.relpPort });
    for (let b = 0; b < 4; b++) expect((await sink.write(events(500, 100_000 + b * 500))).delivered).toBe(500);
    await sink.close();
    const lines = (await rs.receiver.waitForLines(before + 2000)).slice(before);
    expect(new Set(lines.map((l) => /key="([^"]*)"/.exec(l)?.[1])).size).toBe(2000);
    expect(lines).toHaveLength(2000);
    expect(await counter(sinkResentEvents, 'rs-relp-calm')).toBe(0);
  });
});

describe('syslog sink against syslog-ng', () => {
  let ng: SyslogNg;
  beforeAll(async () => {
    ng = await startSyslogNg();
  });
  afterAll(async () => {
    await ng?.receiver.stop();
  });

  // syslog-ng is killed, not stopped: on SIGTERM it keeps accepting while it shuts down and
  // drops what its memory queues hold (syslog-ng/syslog-ng#4596), a loss after it has read the
  // messages that no plain-syslog sender can see (docs/sinks.md).
  it('loses no event over plain TCP when syslog-ng crashes and restarts mid-export (resends counted)', async () => {
    const r = await restartScenario(
      ng.receiver,
      { name: 'ng-tcp', type: 'syslog', protocol: 'tcp', host: '127.0.0.1', port: ng.tcpPort },
      'SIGKILL',
    );
    expect(r.distinct).toBe(6000);
    expect(r.lines - r.distinct).toBeLessThanOrEqual(r.resent);
  });

  it('keeps the batch after a 70 KiB event whole: truncated to fit, nothing lost after it', async () => {
    const before = ng.receiver.lines().length;
    const sink = await openSink({ name: 'ng-big', type: 'syslog', protocol: 'tcp', host: '127.0.0.1', port: ng.tcpPort });
    const batch = oversizeBatch(500_000);
    expect(await sink.write(batch)).toEqual({ delivered: 36, rejected: [] });
    await sink.close();
    const lines = (await ng.receiver.waitForLines(before + 36)).slice(before);
    expect(lines.map((l) => /key="([^"]*)"/.exec(l)?.[1])).toEqual(batch.map((e) => e.key));
    expect(lines.filter((l) => l.includes('truncated="'))).toHaveLength(2);
  });

  it('loses no event over TLS when syslog-ng crashes and restarts mid-export', async () => {
    const r = await restartScenario(
      ng.receiver,
      { name: 'ng-tls', type: 'syslog', protocol: 'tls', host: '127.0.0.1', port: ng.tlsPort, tls: { caFile: ng.ca.caFile } },
      'SIGKILL',
    );
    expect(r.distinct).toBe(6000);
    expect(r.lines - r.distinct).toBeLessThanOrEqual(r.resent);
  });
});
