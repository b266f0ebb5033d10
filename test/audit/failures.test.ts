/**
 * Failures at the export boundary and in the sinks: fatal ones stop the run with a clear,
 * classified error and leave the cursor where it was; transient ones are retried without
 * losing or repeating events.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCodes, type SyncError } from '../../src/errors.ts';
import { partialSummary, runAuditExport } from '../../src/audit/run-audit-export.ts';
import { createSink } from '../../src/audit/sinks/registry.ts';
import { SinkFailedError } from '../../src/audit/fan-out.ts';
import { HOUR, T0, TOKEN, createHarness, duplicates, expectedIds, type Harness } from './support/harness.ts';
import { startCsvServer, type CsvServer } from './support/csv-server.ts';

let h: Harness | undefined;
let csv: CsvServer | undefined;
afterEach(async () => {
  await h?.close();
  await csv?.close();
  h = undefined;
  csv = undefined;
});

const EXPORT = '/api/v1/audit-logs/export';
const sorted = (xs: string[]): string[] => [...xs].sort();

async function rejection(p: Promise<unknown>): Promise<SyncError> {
  try {
    await p;
  } catch (e) {
    return e as SyncError;
  }
  throw new Error('expected the run to fail');
}

/** One good run (cursor at T0 + 1 h), then the clock moves on an hour. */
async function withCursor(harness: Harness): Promise<{ cursorMs: number | null; lines: number }> {
  await harness.run();
  const cursorMs = (await harness.state.load()).cursorMs;
  expect(cursorMs).toBe(T0 + HOUR);
  harness.nowMs += HOUR;
  return { cursorMs, lines: (await harness.sinkKeys()).length };
}

describe('fatal export errors', () => {
  it('401: classified, explained, cursor unchanged', async () => {
    h = await createHarness({ nowMs: T0 + HOUR });
    const before = await withCursor(h);
    const err = await rejection(h.run({}, { platform: h.client('not-a-valid-token') }));
    expect(err.code).toBe(ErrorCodes.AUTH_INVALID);
    expect(err.message).toMatch(/401/);
    expect(err.message).not.toContain('not-a-valid-token');
    expect((await h.state.load()).cursorMs).toBe(before.cursorMs);
    expect(await h.sinkKeys()).toHaveLength(before.lines);
  });

  it('403 without AuditLogManage: says which permission is missing, cursor unchanged', async () => {
    h = await createHarness({ nowMs: T0 + HOUR, sim: { tokens: [{ token: TOKEN }, { token: 'limited', permissions: ['DownloadData'] }] } });
    const before = await withCursor(h);
    const err = await rejection(h.run({}, { platform: h.client('limited') }));
    expect(err.code).toBe(ErrorCodes.AUTH_FORBIDDEN);
    expect(err.message).toContain('AuditLogManage');
    expect((await h.state.load()).cursorMs).toBe(before.cursorMs);
    expect(await h.sinkKeys()).toHaveLength(before.lines);
  });

  it('feature disabled: its own code and an actionable message, no retries, cursor unchanged', async () => {
    h = await createHarness({ nowMs: T0 + HOUR });
    const before = await withCursor(h);
    h.sim.audit.setFeatureEnabled(false);
    h.sim.clearRequests();
    const err = await rejection(h.run());
    expect(err.code).toBe(ErrorCodes.FEATURE_DISABLED);
    expect(err.message).toMatch(/audit-log feature is not enabled/);
    expect(h.sim.requests.filter((r) => r.path === EXPORT)).toHaveLength(1);
    expect(partialSummary(err)?.windowsDone).toBe(0);
    expect((await h.state.load()).cursorMs).toBe(before.cursorMs);
    expect(await h.sinkKeys()).toHaveLength(before.lines);
  });

  it('a 200 carrying a JSON { error } body about the feature is an error, not an empty export', async () => {
    csv = await startCsvServer(() => ({
      contentType: 'application/json',
      body: JSON.stringify({ error: 'Audit log feature is not enabled on this plan' }),
    }));
    h = await createHarness({ nowMs: T0 + HOUR, platformUrl: csv.url });
    const err = await rejection(h.run());
    expect(err.code).toBe(ErrorCodes.FEATURE_DISABLED);
    expect((await h.state.load()).cursorMs).toBeNull();
  });

  it('an export without any timestamp column fails the run and names the setting to fix', async () => {
    csv = await startCsvServer(() => ({ body: 'Event Name,User Email\nLogged in,a@example.com\n' }));
    h = await createHarness({
      nowMs: T0 + HOUR,
      platformUrl: csv.url,
      audit: { retry: { windowAttempts: 2, baseDelayMs: 1, maxDelayMs: 5 } },
    });
    const err = await rejection(h.run());
    expect(err.code).toBe(ErrorCodes.EXPORT_NO_HEADER);
    expect(err.message).toContain('audit.timestamp.column');
    expect((await h.state.load()).cursorMs).toBeNull();
  });
});

describe('transient export failures', () => {
  it('a stream cut mid-row is retried from the committed cursor: nothing lost, nothing repeated', async () => {
    h = await createHarness({ nowMs: T0 + 3 * HOUR, audit: { checkpointEvents: 200 } });
    h.sim.setFaults([{ kind: 'truncate', pathPrefix: EXPORT, afterBytes: 30_000, times: 3 }]);
    const s = await h.run();
    expect(s.windowRetries).toBe(3);
    const expected = expectedIds(h.sim, T0, T0 + 3 * HOUR);
    const plain = await h.plainKeys();
    expect(duplicates(plain)).toEqual([]);
    expect(sorted(plain)).toEqual(sorted(expected));
    expect(sorted(await h.sinkKeys())).toEqual(sorted(expected));
    expect(s.cursorMs).toBe(T0 + 3 * HOUR);
  });

  it('5xx beyond the client retries and connection resets are retried per window', async () => {
    h = await createHarness({ nowMs: T0 + 2 * HOUR });
    h.sim.setFaults([
      { kind: 'status', status: 503, pathPrefix: EXPORT, times: 3 },
      { kind: 'reset', pathPrefix: EXPORT, times: 2 },
    ]);
    const s = await h.run();
    expect(s.windowRetries).toBeGreaterThanOrEqual(2);
    const plain = await h.plainKeys();
    expect(duplicates(plain)).toEqual([]);
    expect(sorted(plain)).toEqual(sorted(expectedIds(h.sim, T0, T0 + 2 * HOUR)));
  });

  it('gives up after audit.retry.windowAttempts and keeps the cursor at the last commit', async () => {
    h = await createHarness({ nowMs: T0 + 2 * HOUR, audit: { retry: { windowAttempts: 2, baseDelayMs: 1, maxDelayMs: 5 } } });
    h.sim.setFaults([{ kind: 'status', status: 502, pathPrefix: EXPORT }]);
    const err = await rejection(h.run());
    expect(err.code).toBe(ErrorCodes.TRANSIENT);
    expect(partialSummary(err)?.windowRetries).toBe(1);
    expect((await h.state.load()).cursorMs).toBeNull();
  });
});

describe('sink failures', () => {
  it('a sink that fails after its retries stops the run; the cursor waits; the next run completes without loss', async () => {
    h = await createHarness({ nowMs: T0 + 3 * HOUR, audit: { checkpointEvents: 300 }, plain: { failFromWrite: 12 } });
    const err = await rejection(h.run());
    expect(err).toBeInstanceOf(SinkFailedError);
    expect((err as SinkFailedError).sink).toBe('plain');
    const cursor = (await h.state.load()).cursorMs;
    expect(cursor).not.toBeNull();
    expect(cursor!).toBeLessThan(T0 + 3 * HOUR);
    // The file sink received batches the cursor does not cover yet.
    const fileBefore = await h.sinkKeys();
    expect(fileBefore.length).toBeGreaterThan(0);

    h.lastSinks = [];
    const s = await h.run();
    expect(s.cursorMs).toBe(T0 + 3 * HOUR);
    const expected = sorted(expectedIds(h.sim, T0, T0 + 3 * HOUR));
    // Idempotent file sink: exactly once (events it held were not rewritten).
    const file = await h.sinkKeys();
    expect(duplicates(file)).toEqual([]);
    expect(sorted(file)).toEqual(expected);
    expect(s.alreadyHeld['file']).toBeGreaterThan(0);
    // Non-idempotent sink: at least once, nothing lost.
    expect([...new Set(await h.plainKeys())].sort()).toEqual(expected);
  });
});

describe('interruption', () => {
  it('an aborted run stops without committing past the last checkpoint; the next run finishes the job', async () => {
    h = await createHarness({ nowMs: T0 + 4 * HOUR, audit: { checkpointEvents: 300 } });
    const ac = new AbortController();
    let checkpoints = 0;
    const err = await rejection(
      runAuditExport({
        platform: h.platform,
        config: h.config,
        tenant: h.tenant,
        state: h.state,
        deadLetters: h.deadLetters,
        sinks: h.config.sinks.map((c) => createSink(c, { configDir: h!.dir })),
        now: () => h!.nowMs,
        signal: ac.signal,
        onProgress: (p) => {
          if (p.phase === 'checkpoint' && ++checkpoints === 3) ac.abort(new Error('operator pressed Ctrl-C'));
        },
      }),
    );
    expect(String((err as Error).message)).toContain('Ctrl-C');
    const cursor = (await h.state.load()).cursorMs;
    expect(cursor).not.toBeNull();
    expect(cursor!).toBeLessThan(T0 + 2 * HOUR);
    await h.run();
    const file = await h.sinkKeys();
    expect(duplicates(file)).toEqual([]);
    expect(sorted(file)).toEqual(sorted(expectedIds(h.sim, T0, T0 + 4 * HOUR)));
  });
});
