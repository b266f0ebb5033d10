/**
 * The export boundary against a hostile server over real sockets: every answer that is not a
 * complete CSV export fails the window with its own code, after the window's retries; the
 * cursor does not move, nothing of it reaches the sinks, and the process goes on. What was
 * delivered from a response that later proved incomplete is not delivered again.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCodes, type SyncError } from '../../src/errors.ts';
import { partialSummary } from '../../src/audit/run-audit-export.ts';
import type { AuditConfigInput } from '../../src/audit/config-schema.ts';
import { HOUR, T0, createHarness, duplicates, type Harness } from './support/harness.ts';
import { answer, head, startHostileServer, type HostileServer, type Responder } from '../helpers/hostile-http.ts';

let h: Harness | undefined;
let server: HostileServer | undefined;
afterEach(async () => {
  await h?.close();
  await server?.close();
  h = undefined;
  server = undefined;
});

const CSV = 'text/csv; charset=utf-8';
const HEADER = 'timestamp,event_id,event_name,user_email\n';
const row = (i: number): string => `${new Date(T0 + i * 1000).toISOString()},ev-${i},Logged in,u${i}@example.com\n`;
const rows = (n: number): string => Array.from({ length: n }, (_, i) => row(i)).join('');
const ids = (n: number): string[] => Array.from({ length: n }, (_, i) => `ev-${i}`);

async function rejection(p: Promise<unknown>): Promise<SyncError> {
  try {
    await p;
  } catch (e) {
    return e as SyncError;
  }
  throw new Error('expected the run to fail');
}

async function harnessFor(respond: Responder, audit: Partial<AuditConfigInput> = {}): Promise<Harness> {
  server = await startHostileServer(respond);
  h = await createHarness({
    nowMs: T0 + HOUR,
    platformUrl: server.url,
    audit: { retry: { windowAttempts: 2, baseDelayMs: 1, maxDelayMs: 5 }, ...audit },
  });
  return h;
}

/** The run fails with `code` after every attempt; the cursor is where it was and no sink got anything. */
async function expectWindowFailed(harness: Harness, code: string): Promise<SyncError> {
  const err = await rejection(harness.run());
  expect({ code: err.code, kind: err.kind }).toEqual({ code, kind: 'transient' });
  expect(partialSummary(err)?.windowRetries).toBe(1);
  expect(partialSummary(err)?.windowsDone).toBe(0);
  expect((await harness.state.load()).cursorMs).toBeNull();
  expect(await harness.sinkKeys()).toEqual([]);
  expect(await harness.plainKeys()).toEqual([]);
  expect(server?.requests.length).toBe(2);
  return err;
}

describe('answers that are not an export never move the cursor', () => {
  it('a 302 with no body is never followed: E_EXPORT_REDIRECT', async () => {
    let followed = 0;
    await harnessFor((io, req) => {
      if (req.path !== '/api/v1/audit-logs/export') followed++;
      io.end(head(302, { location: 'https://login.example.net/sso?return=x', 'content-length': 0 }));
    });
    const err = await expectWindowFailed(h!, ErrorCodes.EXPORT_REDIRECT);
    expect(err.message).toContain('https://login.example.net');
    expect(err.message).not.toContain('return=x');
    expect(followed).toBe(0);
  });

  it('a 301 with an HTML body: E_EXPORT_REDIRECT, the process goes on', async () => {
    await harnessFor(answer.full(301, { location: '/login', 'content-type': 'text/html' }, '<html>Moved</html>'));
    await expectWindowFailed(h!, ErrorCodes.EXPORT_REDIRECT);
  });

  it('a 204: E_EXPORT_EMPTY', async () => {
    await harnessFor((io) => io.end(head(204)));
    await expectWindowFailed(h!, ErrorCodes.EXPORT_EMPTY);
  });

  it('a 200 text/csv with an empty body (no header row): E_EXPORT_EMPTY', async () => {
    await harnessFor(answer.full(200, { 'content-type': CSV }, ''));
    await expectWindowFailed(h!, ErrorCodes.EXPORT_EMPTY);
  });

  it('a 200 text/csv with an empty close-delimited body: E_EXPORT_EMPTY', async () => {
    await harnessFor(answer.closeDelimited(CSV, ''));
    await expectWindowFailed(h!, ErrorCodes.EXPORT_EMPTY);
  });

  it('a proxy login page (200 text/html): E_EXPORT_NOT_CSV, the process goes on', async () => {
    await harnessFor(answer.full(200, { 'content-type': 'text/html' }, '<html>Please log in</html>'));
    const err = await expectWindowFailed(h!, ErrorCodes.EXPORT_NOT_CSV);
    expect(err.message).toMatch(/login page/);
  });

  it('a login page served as text/csv is recognised by its body: E_EXPORT_NOT_CSV', async () => {
    await harnessFor(answer.full(200, { 'content-type': CSV }, '\n  <!doctype html><html>Please log in</html>'));
    await expectWindowFailed(h!, ErrorCodes.EXPORT_NOT_CSV);
  });

  it('a JSON body that is not about the feature: E_EXPORT_NOT_CSV', async () => {
    await harnessFor(answer.full(200, { 'content-type': 'application/json' }, '{"error":"upstream said no"}'));
    await expectWindowFailed(h!, ErrorCodes.EXPORT_NOT_CSV);
  });

  it('a content type that is not CSV (application/xml): E_EXPORT_NOT_CSV', async () => {
    await harnessFor(answer.full(200, { 'content-type': 'application/xml' }, HEADER));
    await expectWindowFailed(h!, ErrorCodes.EXPORT_NOT_CSV);
  });

  it('a line of text instead of a header row: E_EXPORT_NO_HEADER', async () => {
    await harnessFor(answer.full(200, { 'content-type': 'text/plain' }, 'Please log in\n'));
    await expectWindowFailed(h!, ErrorCodes.EXPORT_NO_HEADER);
  });

  it('data rows without their header row: E_EXPORT_NO_HEADER', async () => {
    await harnessFor(answer.full(200, { 'content-type': CSV }, rows(3)));
    await expectWindowFailed(h!, ErrorCodes.EXPORT_NO_HEADER);
  });
});

describe('a body cut short never counts as a complete window', () => {
  it('a chunked body that ends without its terminating chunk: E_EXPORT_TRUNCATED', async () => {
    await harnessFor(answer.chunked(CSV, [HEADER, rows(5)], false));
    await expectTruncatedKeepingDelivered(5);
  });

  it('a body shorter than its Content-Length: E_EXPORT_TRUNCATED', async () => {
    const body = HEADER + rows(5);
    await harnessFor(answer.shortOfLength(CSV, body, Buffer.byteLength(body) + 500));
    await expectTruncatedKeepingDelivered(5);
  });

  it('a close-delimited body cut inside its last row: E_EXPORT_TRUNCATED', async () => {
    const body = HEADER + rows(5);
    await harnessFor(answer.closeDelimited(CSV, `${body}${new Date(T0).toISOString()},ev-9,Log`));
    await expectTruncatedKeepingDelivered(5);
  });

  it('a close-delimited body cut inside a quoted cell: E_EXPORT_TRUNCATED', async () => {
    await harnessFor(answer.closeDelimited(CSV, `${HEADER}${rows(2)}${new Date(T0).toISOString()},ev-9,"Log`));
    await expectTruncatedKeepingDelivered(2);
  });

  it('events delivered before the cut are not delivered again: the next attempt is complete, each event once', async () => {
    let n = 0;
    const cut = answer.chunked(CSV, [HEADER, rows(150)], false);
    const whole = answer.chunked(CSV, [HEADER, rows(300)], true);
    await harnessFor((io, req) => (n++ === 0 ? cut : whole)(io, req), { batchSize: 50 });
    const s = await h!.run();
    expect(s.windowRetries).toBe(1);
    expect(s.cursorMs).toBe(T0 + HOUR);
    const plain = await h!.plainKeys();
    expect(duplicates(plain)).toEqual([]);
    expect(plain).toHaveLength(300);
    expect(duplicates(await h!.sinkKeys())).toEqual([]);
  });

  it('events delivered by a failed run are not delivered again by the next run', async () => {
    let n = 0;
    const cut = answer.chunked(CSV, [HEADER, rows(150)], false);
    const whole = answer.chunked(CSV, [HEADER, rows(300)], true);
    await harnessFor((io, req) => (n++ < 2 ? cut : whole)(io, req), { batchSize: 50 });
    await rejection(h!.run());
    expect((await h!.state.load()).cursorMs).not.toBe(T0 + HOUR);
    const s = await h!.run();
    expect(s.cursorMs).toBe(T0 + HOUR);
    const plain = await h!.plainKeys();
    // The non-idempotent sink too: the failed run committed the keys of what it delivered.
    expect(duplicates(plain)).toEqual([]);
    expect(plain).toHaveLength(300);
  });

  it('a header-only export is a legitimate empty window: the cursor moves', async () => {
    await harnessFor(answer.full(200, { 'content-type': CSV }, HEADER));
    const s = await h!.run();
    expect(s.windowsDone).toBe(1);
    expect(s.cursorMs).toBe(T0 + HOUR);
  });
});

/** Truncated: the window failed with E_EXPORT_TRUNCATED and the rows delivered before the cut are committed as keys only. */
async function expectTruncatedKeepingDelivered(delivered: number): Promise<void> {
  const err = await rejection(h!.run());
  expect({ code: err.code, kind: err.kind }).toEqual({ code: ErrorCodes.EXPORT_TRUNCATED, kind: 'transient' });
  expect(partialSummary(err)?.windowsDone).toBe(0);
  const st = await h!.state.load();
  // The cursor stays at the window's start (it had none): no event of the window counts as read.
  expect(st.cursorMs === null || st.cursorMs <= T0).toBe(true);
  const plain = await h!.plainKeys();
  expect(duplicates(plain)).toEqual([]);
  for (const k of plain) expect(ids(delivered)).toContain(k.replace(/^.*?(ev-\d+).*$/, '$1'));
  expect(server?.requests.length).toBe(2);
}

describe('bounded memory and time', () => {
  it('one endless line is cut at audit.limits.maxRecordBytes: E_RECORD_TOO_LARGE', async () => {
    await harnessFor(answer.endlessLine(CSV, HEADER), { limits: { maxRecordBytes: 256 * 1024 } });
    const err = await expectWindowFailed(h!, ErrorCodes.RECORD_TOO_LARGE);
    expect(err.message).toContain('audit.limits.maxRecordBytes');
    // The client hung up soon after the limit (socket buffers aside), twice.
    expect(server!.bytesSent()).toBeLessThan(2 * 32 * 1024 * 1024);
  });

  it('a header that never ends is cut too: E_RECORD_TOO_LARGE', async () => {
    await harnessFor(answer.endlessLine(CSV, 'timestamp,'), { limits: { maxRecordBytes: 64 * 1024 } });
    await expectWindowFailed(h!, ErrorCodes.RECORD_TOO_LARGE);
  });

  it('a body dripping a byte at a time runs out of audit.limits.windowDeadlineSeconds: E_EXPORT_DEADLINE', async () => {
    await harnessFor(answer.drip(CSV, HEADER + rows(2), 20), { limits: { windowDeadlineSeconds: 0.4 } });
    const started = Date.now();
    await expectWindowFailed(h!, ErrorCodes.EXPORT_DEADLINE);
    expect(Date.now() - started).toBeLessThan(10_000);
    await new Promise((r) => setTimeout(r, 50));
    expect(server!.openConnections()).toBe(0);
  });

  it('headers that never come run out of the deadline as well: E_EXPORT_DEADLINE', async () => {
    await harnessFor(() => undefined, { limits: { windowDeadlineSeconds: 0.3 } });
    await expectWindowFailed(h!, ErrorCodes.EXPORT_DEADLINE);
  });

  it('a window body larger than audit.limits.maxWindowMegabytes: E_RESPONSE_TOO_LARGE', async () => {
    await harnessFor(answer.chunked(CSV, [HEADER, rows(2000)], true), { limits: { maxWindowMegabytes: 0.02 } });
    await expectWindowFailed(h!, ErrorCodes.RESPONSE_TOO_LARGE);
  });
});

describe('a complete export after hostile answers', () => {
  it('is read in full once the server behaves', async () => {
    let n = 0;
    const bad = answer.full(200, { 'content-type': 'text/html' }, '<html>Please log in</html>');
    const good = answer.full(200, { 'content-type': CSV }, HEADER + rows(10));
    await harnessFor((io, req) => (n++ === 0 ? bad : good)(io, req));
    const s = await h!.run();
    expect(s.windowRetries).toBe(1);
    expect(await h!.plainKeys()).toHaveLength(10);
  });
});
