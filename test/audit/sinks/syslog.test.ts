import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { encodeCef, escapeCefHeader, escapeCefValue } from '../../../src/audit/sinks/syslog/cef.ts';
import { frame } from '../../../src/audit/sinks/syslog/encoder.ts';
import { startSyslogReceiver, type SyslogReceiver } from '../../helpers/receivers/syslog-receiver.ts';
import { makeTestPki, type TestPki } from '../../helpers/receivers/test-ca.ts';
import { FAST_RETRY, makeEvent, makeEvents, openSink, recordingObserver, rejectionOf } from './fixtures.ts';
import { eventDoc, eventFromDoc } from '../../../src/audit/event.ts';

const CEF = {
  vendor: 'Acme|Corp',
  product: 'audit\\log',
  version: '1',
  signatureIdField: 'event.action',
  nameField: 'event.action',
  severity: 3,
  extensions: { act: 'event.action', suser: 'user.email', msg: 'note' },
  includeDocument: false,
};

describe('CEF encoding', () => {
  it('escapes \\ and | in header fields and turns newlines into spaces', () => {
    expect(escapeCefHeader('a|b\\c\nd')).toBe('a\\|b\\\\c d');
  });

  it('escapes \\ and = in extension values and writes newlines as \\n / \\r, leaving | alone', () => {
    expect(escapeCefValue('x=1\\2|3\r\n4')).toBe('x\\=1\\\\2|3\\r\\n4');
  });

  it('builds a full line from nasty values', () => {
    const ev = makeEvent(1, { 'event.action': 'user|delete=now', 'user.email': 'a\\b=c@example.com', note: 'line1\nline2 | pipe' });
    const line = encodeCef(ev, CEF);
    expect(line).toBe(
      'CEF:0|Acme\\|Corp|audit\\\\log|1|user\\|delete=now|user\\|delete=now|3|' +
        `rt=${ev.timestampMs} externalId=evt-1 act=user|delete\\=now suser=a\\\\b\\=c@example.com msg=line1\\nline2 | pipe`,
    );
    // One physical line: a newline inside would split the syslog message for line-based readers.
    expect(line).not.toMatch(/[\r\n]/);
  });

  it('finds fields in the ecs (nested) and plain document styles alike', () => {
    const base = makeEvent(3);
    const ecs = eventFromDoc(base.key, base.timestampMs, {
      event: { action: 'group.update' },
      user: { email: 'e@example.com' },
      source: { ip: '10.1.1.1' },
    });
    const plain = eventFromDoc(base.key, base.timestampMs, { action: 'group.update', email: 'e@example.com', ip: '10.1.1.1' });
    const opts = { ...CEF, extensions: { act: 'event.action', suser: 'user.email', src: 'source.ip' } };
    const tail = `|3|rt=${base.timestampMs} externalId=evt-3 act=group.update suser=e@example.com src=10.1.1.1`;
    expect(encodeCef(ecs, opts).endsWith(tail)).toBe(true);
    expect(encodeCef(plain, opts).endsWith(tail)).toBe(true);
  });

  it('frames by byte length, not characters', () => {
    expect(frame('héllo').toString('utf8')).toBe('6 héllo');
  });
});

describe('syslog sink over TCP', () => {
  let rx: SyslogReceiver;
  afterEach(async () => {
    await rx.close();
  });

  it('writes RFC 5424 messages in octet-counted frames', async () => {
    rx = await startSyslogReceiver();
    const sink = await openSink({
      name: 'siem',
      type: 'syslog',
      protocol: 'tcp',
      host: '127.0.0.1',
      port: rx.port,
      hostname: 'sync-1',
      facility: 'local4',
      severity: 'notice',
      retry: FAST_RETRY,
    });
    const events = makeEvents(5);
    events[2] = makeEvent(2, { note: 'multi\nline "quoted" ]' });
    expect(await sink.write(events)).toEqual({ delivered: 5, rejected: [] });
    await sink.close();
    await expect.poll(() => rx.messages.length).toBe(5);
    expect(rx.errors).toEqual([]);
    const m = /^<(\d+)>1 (\S+) (\S+) (\S+) (\d+) (\S+) (\[[^\]]*\]) (.*)$/s.exec(rx.messages[2]!);
    expect(m).not.toBeNull();
    const [, pri, ts, host, app, , msgid, sd, msg] = m!;
    expect(Number(pri)).toBe(20 * 8 + 5);
    expect(ts).toBe(new Date(events[2]!.timestampMs).toISOString());
    expect([host, app, msgid]).toEqual(['sync-1', 'scim-audit-sync', 'user.login']);
    expect(sd).toBe('[scimsync@32473 key="evt-2"]');
    expect(JSON.parse(msg!)).toEqual(eventDoc(events[2]!));
  });

  it('sends CEF payloads when format is cef', async () => {
    rx = await startSyslogReceiver();
    const sink = await openSink({
      name: 'siem',
      type: 'syslog',
      protocol: 'tcp',
      host: '127.0.0.1',
      port: rx.port,
      format: 'cef',
      structuredData: false,
      retry: FAST_RETRY,
    });
    await sink.write([makeEvent(7)]);
    await sink.close();
    await expect.poll(() => rx.messages.length).toBe(1);
    expect(rx.messages[0]).toMatch(
      / user\.login - CEF:0\|analytics-platform\|audit-log\|1\|user\.login\|user\.login\|3\|rt=\d+ externalId=evt-7 act=user\.login suser=user7@example\.com src=10\.0\.0\.1 cs1Label=auditEvent cs1=\{/,
    );
  });

  it('reconnects when the receiver closed the connection between batches', async () => {
    rx = await startSyslogReceiver();
    const sink = await openSink({ name: 'siem', type: 'syslog', protocol: 'tcp', host: '127.0.0.1', port: rx.port, retry: FAST_RETRY });
    await sink.write(makeEvents(2));
    await expect.poll(() => rx.messages.length).toBe(2);
    rx.dropAll();
    await expect.poll(() => rx.open()).toBe(0);
    await new Promise((r) => setTimeout(r, 50)); // let the FIN/RST reach the client socket
    expect((await sink.write(makeEvents(2, 10))).delivered).toBe(2);
    await sink.close();
    await expect.poll(() => rx.messages.length).toBe(4);
    expect(rx.connections).toBe(2);
  });

  it('resends the whole batch on a new connection when a write cannot be flushed in time', async () => {
    rx = await startSyslogReceiver();
    rx.stallConnections = 1; // the first connection hangs: the kernel buffers fill, the write stalls
    const observer = recordingObserver();
    const sink = await openSink(
      {
        name: 'siem',
        type: 'syslog',
        protocol: 'tcp',
        host: '127.0.0.1',
        port: rx.port,
        // Long enough for the second connection to flush 9 MB on a loaded machine; the stalled one never does.
        timeoutSeconds: 2,
        batch: { maxEvents: 100_000, maxBytes: 16 * 1024 * 1024 },
        retry: FAST_RETRY,
      },
      { observer },
    );
    const events = Array.from({ length: 30_000 }, (_, i) => makeEvent(i, { pad: 'x'.repeat(200) }));
    expect((await sink.write(events)).delivered).toBe(30_000);
    expect(observer.retries).toHaveLength(1);
    expect(observer.retries[0]!.reason).toContain('not flushed');
    await sink.close();
    await expect.poll(() => rx.messages.length).toBe(30_000);
    expect(rx.connections).toBe(2);
    expect(rx.errors).toEqual([]);
  });

  it('gives up transiently when nobody listens (whenDown: fail)', async () => {
    rx = await startSyslogReceiver();
    const port = rx.port;
    await rx.close();
    const sink = await openSink({
      name: 'siem',
      type: 'syslog',
      protocol: 'tcp',
      host: '127.0.0.1',
      port,
      whenDown: 'fail',
      retry: { ...FAST_RETRY, maxAttempts: 2 },
    });
    const err = await rejectionOf(sink.write(makeEvents(1)));
    expect(err).toMatchObject({ kind: 'transient', code: 'E_TRANSIENT' });
    expect(err.message).toContain('ECONNREFUSED');
    await sink.close();
  });

  it('dead-letters every event as syslog_unreachable when nobody listens, spending the budget once per outage', async () => {
    rx = await startSyslogReceiver();
    const port = rx.port;
    await rx.close();
    const observer = recordingObserver();
    const sink = await openSink(
      {
        name: 'siem-down',
        type: 'syslog',
        protocol: 'tcp',
        host: '127.0.0.1',
        port,
        batch: { maxEvents: 4 },
        retry: { ...FAST_RETRY, maxAttempts: 3 },
      },
      { observer },
    );
    // Three requests: the first spends the budget, the other two are not attempted.
    const first = await sink.write(makeEvents(10));
    expect(first.delivered).toBe(0);
    expect(first.rejected.map((r) => r.event.key)).toEqual(makeEvents(10).map((e) => e.key));
    expect(new Set(first.rejected.map((r) => r.code))).toEqual(new Set(['syslog_unreachable']));
    expect(first.rejected[0]?.reason).toMatch(/did not confirm: .*ECONNREFUSED.* after 3 attempts/);
    expect(first.rejected[9]?.reason).toMatch(/^not sent: receiver 127\.0\.0\.1:\d+ down/);
    expect(observer.retries).toHaveLength(2);
    // A later write gets a single attempt while the receiver stays down.
    const second = await sink.write(makeEvents(2, 10));
    expect(second.rejected.map((r) => r.code)).toEqual(['syslog_unreachable', 'syslog_unreachable']);
    expect(second.rejected[0]?.reason).toContain('after 1 attempts');
    expect(observer.retries).toHaveLength(2);
    await sink.close();
  });
});

describe('syslog sink over TLS', () => {
  let pki: TestPki;
  let rx: SyslogReceiver;
  beforeAll(async () => {
    pki = makeTestPki();
    rx = await startSyslogReceiver({ key: pki.serverKey, cert: pki.serverCert });
  });
  afterAll(async () => {
    await rx.close();
  });

  it('delivers over TLS when the test CA is trusted', async () => {
    const sink = await openSink({
      name: 'tls',
      type: 'syslog',
      protocol: 'tls',
      host: '127.0.0.1',
      port: rx.port,
      tls: { caFile: pki.caFile },
      retry: FAST_RETRY,
    });
    expect((await sink.write(makeEvents(2, 100))).delivered).toBe(2);
    await sink.close();
    await expect.poll(() => rx.messages.filter((m) => m.includes('evt-10')).length).toBe(2);
  });

  it('verifies the server name against the certificate (localhost)', async () => {
    const sink = await openSink({
      name: 'tls',
      type: 'syslog',
      protocol: 'tls',
      host: 'localhost',
      port: rx.port,
      tls: { caFile: pki.caFile },
      retry: FAST_RETRY,
    });
    expect((await sink.write([makeEvent(300)])).delivered).toBe(1);
    await sink.close();
  });

  it('fails fatally, without retrying, when the CA does not match', async () => {
    const observer = recordingObserver();
    const sink = await openSink(
      {
        name: 'tls',
        type: 'syslog',
        protocol: 'tls',
        host: '127.0.0.1',
        port: rx.port,
        tls: { caFile: pki.otherCaFile },
        retry: FAST_RETRY,
      },
      { observer },
    );
    const err = await rejectionOf(sink.write(makeEvents(1)));
    expect(err).toMatchObject({ kind: 'fatal', code: 'E_CONFIG_INVALID' });
    expect(err.message).toMatch(
      /TLS verification .* failed \((UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_GET_ISSUER_CERT_LOCALLY)\)/,
    );
    expect(observer.retries).toHaveLength(0);
    await sink.close();
  });
});
