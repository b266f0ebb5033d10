/**
 * Exactly-once at the edges (issue #15): identical events in an unsorted export, a crash
 * inside a large Redis commit, the run lock's races, a stream that fails while a batch is in
 * flight, and what the run reports on a re-run. Each of these failed before its fix.
 */
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chmod, mkdtemp, readFile, rename, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCodes } from '../../src/errors.ts';
import { SinkFailedError } from '../../src/audit/fan-out.ts';
import { runAuditExport, type AuditProgress } from '../../src/audit/run-audit-export.ts';
import { acquireFileLock, releaseFileLock } from '../../src/audit/state/file-lock.ts';
import { FileAuditStateStore } from '../../src/audit/state/file-store.ts';
import { RedisAuditStateStore } from '../../src/audit/state/redis-store.ts';
import { auditRecorder } from '../../src/observability/instrument.ts';
import { auditMetrics } from '../../src/audit/metrics.ts';
import { renderExportSummary } from '../../src/cli/audit.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { HOUR, T0, createHarness, duplicates, type Harness } from './support/harness.ts';
import { startCsvServer, type CsvServer } from './support/csv-server.ts';
import { JsonlSink } from './support/jsonl-sink.ts';

const run = promisify(execFile);
const LOCK_CHILD = fileURLToPath(new URL('./support/lock-child.ts', import.meta.url));

let h: Harness | undefined;
let csv: CsvServer | undefined;
let server: Server | undefined;
let dir: string | undefined;
afterEach(async () => {
  await h?.close();
  await csv?.close();
  if (server) await new Promise<void>((resolve) => server!.close(() => resolve()));
  server?.closeAllConnections();
  if (dir) await rm(dir, { recursive: true, force: true });
  h = csv = server = dir = undefined;
});

const at = (minutes: number): string => new Date(T0 + minutes * 60_000).toISOString();

describe('identical events in an unsorted export', () => {
  it('two identical logins with another event between them: both delivered, and a re-read in another order adds nothing', async () => {
    const rows = [
      `${at(5)},Logged in,a@example.com,203.0.113.7`,
      `${at(7)},Logged out,b@example.com,203.0.113.8`,
      `${at(5)},Logged in,a@example.com,203.0.113.7`,
      `${at(9)},Logged in,c@example.com,203.0.113.9`,
      `${at(7)},Logged out,b@example.com,203.0.113.8`,
    ];
    let request = 0;
    csv = await startCsvServer(() => {
      // Every request returns the same events in another order (the export's order is not documented).
      const order = request++ % 2 === 0 ? rows : [...rows].reverse();
      return { body: ['Timestamp,Event Name,User Email,IP Address', ...order].join('\n') };
    });
    h = await createHarness({ platformUrl: csv.url, nowMs: T0 + HOUR, audit: { overlapMinutes: 120 } });
    const first = await h.run();
    expect(first.eventsRead).toBe(5);
    expect(first.duplicatesSkipped).toBe(0);
    const keys = await h.sinkKeys();
    expect(keys).toHaveLength(5);
    expect(duplicates(keys)).toEqual([]);
    // The overlap re-reads the same hour in reverse order: the same keys, nothing new.
    h.nowMs += 60_000;
    const second = await h.run();
    expect(second.eventsRead).toBe(5);
    expect(second.duplicatesSkipped).toBe(5);
    expect(await h.sinkKeys()).toHaveLength(5);
    expect(await h.plainKeys()).toHaveLength(5);
  });
});

describe('a crash inside a large Redis commit', () => {
  it('dies between two slices of the keys: the cursor and the overlap keys are those of the last commit', async () => {
    const redis = new Redis('redis://127.0.0.1:6379', { maxRetriesPerRequest: 1 });
    const prefix = `test-audit-slices-${process.pid}-${Date.now()}`;
    let evals = 0;
    let failAt = Number.POSITIVE_INFINITY;
    // The real connection; only its second commit call of the large commit "dies" (a crash between slices).
    const flaky = new Proxy(redis, {
      get(target, p) {
        if (p === 'eval') {
          return (...args: unknown[]) =>
            ++evals === failAt
              ? Promise.reject(new Error('connection lost (test)'))
              : (target.eval as (...a: unknown[]) => Promise<unknown>)(...args);
        }
        const v = Reflect.get(target, p) as unknown;
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
    const store = new RedisAuditStateStore(flaky, prefix, 'acme');
    try {
      await store.acquire('test');
      await store.commit({
        cursorMs: 100_000,
        added: [
          ['old-1', 90_000],
          ['old-2', 95_000],
        ],
        pruneBeforeMs: 0,
        nowMs: 1,
      });
      const added: Array<[string, number]> = Array.from({ length: 12_000 }, (_, i) => [`new-${i}`, 100_000 + i]);
      failAt = evals + 2;
      await expect(store.commit({ cursorMs: 200_000, added, pruneBeforeMs: 150_000, nowMs: 2 })).rejects.toThrow();
      const st = await store.load();
      expect(st.cursorMs).toBe(100_000);
      // The keys the next run needs to skip the overlap it re-reads are still there.
      expect(st.dedupe.map(([k]) => k)).toEqual(expect.arrayContaining(['old-1', 'old-2']));
    } finally {
      await store.release().catch(() => undefined);
      const keys = await redis.keys(`${prefix}:*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
    }
  });
});

describe('the run lock of one-shot runs', () => {
  it('two runs start together: a lock file still being written (empty) is not taken as stale', async () => {
    dir = await mkdtemp(join(tmpdir(), 'audit-lock-'));
    const path = join(dir, 'run.lock');
    await writeFile(path, '');
    await expect(acquireFileLock(path, 'second')).rejects.toMatchObject({ code: ErrorCodes.CONFLICT });
    expect(await readFile(path, 'utf8')).toBe('');
  });

  it('a long run on another host keeps its lock past the stale time: its time is refreshed', async () => {
    dir = await mkdtemp(join(tmpdir(), 'audit-lock-'));
    const path = join(dir, 'run.lock');
    await acquireFileLock(path, 'long-run', { host: 'node-a', staleAfterMs: 600 });
    try {
      await new Promise((resolve) => setTimeout(resolve, 1500));
      const info = JSON.parse(await readFile(path, 'utf8')) as { atMs: number };
      expect(Date.now() - info.atMs).toBeLessThan(600);
      const { stdout } = await run(process.execPath, [LOCK_CHILD, path, 'node-b', '600']);
      expect(stdout.trim()).toBe(ErrorCodes.CONFLICT);
    } finally {
      await releaseFileLock(path);
    }
  });

  /** A store that holds the lock and has committed once (cursor 10); `lock` is its lock file, `reopen` another store on its state. */
  async function holdingLockAfterOneCommit(): Promise<{ store: FileAuditStateStore; lock: string; reopen: () => FileAuditStateStore }> {
    const stateDir = await mkdtemp(join(tmpdir(), 'audit-lock-'));
    dir = stateDir;
    const store = new FileAuditStateStore(stateDir, 'acme');
    await store.acquire('first');
    await store.commit({ cursorMs: 10, added: [['a', 9]], pruneBeforeMs: 0, nowMs: 1 });
    return { store, lock: join(stateDir, 'acme', 'audit', 'run.lock'), reopen: () => new FileAuditStateStore(stateDir, 'acme') };
  }
  const otherRunsLock = (): string =>
    JSON.stringify({ pid: 999_999, host: 'node-b', owner: 'second', token: 'someone-else', atMs: Date.now() });

  it('the lock file replaced under us (renamed over, as a takeover writes it): this run commits nothing more', async () => {
    const { store, lock, reopen } = await holdingLockAfterOneCommit();
    const other = `${lock}.other`;
    await writeFile(other, otherRunsLock());
    await rename(other, lock);
    await expect(store.commit({ cursorMs: 20, added: [['b', 19]], pruneBeforeMs: 0, nowMs: 2 })).rejects.toMatchObject({
      code: ErrorCodes.CONFLICT,
    });
    await store.release();
    expect(await reopen().load()).toMatchObject({ cursorMs: 10 });
  });

  it('the lock file only touched (a backup tool changed its mode and times): this run still holds it and commits', async () => {
    const { store, lock, reopen } = await holdingLockAfterOneCommit();
    await chmod(lock, 0o644);
    await utimes(lock, new Date(0), new Date(0));
    await store.commit({ cursorMs: 20, added: [['b', 19]], pruneBeforeMs: 0, nowMs: 2 });
    await store.release();
    expect(await reopen().load()).toMatchObject({ cursorMs: 20 });
  });

  it('another run took the lock over: this run commits nothing more', async () => {
    const { store, lock, reopen } = await holdingLockAfterOneCommit();
    // Another process judged the lock stale and wrote its own.
    await writeFile(lock, otherRunsLock());
    await expect(store.commit({ cursorMs: 20, added: [['b', 19]], pruneBeforeMs: 0, nowMs: 2 })).rejects.toMatchObject({
      code: ErrorCodes.CONFLICT,
    });
    await store.release();
    expect(await readFile(lock, 'utf8')).toContain('someone-else');
    const st = await reopen().load();
    expect(st.cursorMs).toBe(10);
  });
});

describe('a stream failure while a batch is in flight', () => {
  it('the export breaks off while a sink is failing the batch before it: the sink failure stops the run, nothing is sent twice', async () => {
    const header = 'Timestamp,Event Name,User Email';
    const rows = Array.from({ length: 150 }, (_, i) => `${new Date(T0 + 60_000 + i * 1000).toISOString()},Logged in,u${i}@example.com`);
    server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/csv' });
      res.write(`${[header, ...rows].join('\n')}\n`);
      // The connection breaks while the first batch is still with the sinks.
      setTimeout(() => res.destroy(), 60);
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    h = await createHarness({ platformUrl: url, nowMs: T0 + HOUR });
    const plain = new JsonlSink('plain', h.plainPath);
    const failing = new JsonlSink('siem', join(h.dir, 'out', 'siem.jsonl'), { failFromWrite: 1, delayMs: 300 });
    let retries = 0;
    const err = await runAuditExport({
      platform: h.platform,
      config: h.config,
      tenant: h.tenant,
      state: h.state,
      deadLetters: h.deadLetters,
      sinks: [plain, failing],
      now: () => h!.nowMs,
    }).then(
      () => undefined,
      (e: unknown) => e,
    );
    retries = failing.writes;
    expect(err).toBeInstanceOf(SinkFailedError);
    expect((err as SinkFailedError).sink).toBe('siem');
    expect(retries).toBe(1);
    const keys = await plain.keys();
    expect(keys).toHaveLength(100);
    expect(duplicates(keys)).toEqual([]);
  });
});

describe('what a re-run reports', () => {
  it('a re-run with a two-hour overlap starts at 0 % and reads 100 % only when its last window is done (bar and gauge)', async () => {
    h = await createHarness({ nowMs: T0 + 4 * HOUR, audit: { overlapMinutes: 120 }, plain: false });
    await h.run();
    const logger = createLogger({ level: 'silent' });
    const seen: Array<{ phase: AuditProgress['phase']; index: number; ratio: number; gauge: number }> = [];
    const gauge = async (): Promise<number> =>
      (await auditMetrics.backfillProgress.get()).values.find((v) => v.labels['tenant'] === h!.tenant)?.value ?? -1;
    const sinks = h.config.sinks.map((c) => new JsonlSink(c.name, join(h!.dir, 'out', `${c.name}.rerun.jsonl`)));
    const progress: Promise<void>[] = [];
    const summary = await runAuditExport({
      platform: h.platform,
      config: h.config,
      tenant: h.tenant,
      state: h.state,
      deadLetters: h.deadLetters,
      sinks,
      now: () => h!.nowMs,
      observer: auditRecorder(h.tenant, logger),
      onProgress: (p) =>
        progress.push(gauge().then((g) => void seen.push({ phase: p.phase, index: p.windowIndex, ratio: p.ratio, gauge: g }))),
    });
    await Promise.all(progress);
    expect(summary.windowsPlanned).toBe(2);
    const firstStart = seen.find((s) => s.phase === 'window-start');
    expect(firstStart?.ratio).toBe(0);
    const firstDone = seen.find((s) => s.phase === 'window-done' && s.index === 0);
    expect(firstDone?.ratio).toBe(0.5);
    expect(firstDone?.gauge).toBe(0.5);
    const lastDone = seen.find((s) => s.phase === 'window-done' && s.index === 1);
    expect(lastDone?.ratio).toBe(1);
  });

  it('after a crash, the table says how many of the delivered events the sink already held', () => {
    const lines = renderExportSummary({
      tenant: 'acme',
      rangeStartMs: T0,
      rangeEndMs: T0 + HOUR,
      windowsPlanned: 1,
      windowsDone: 1,
      rowsRead: 600,
      eventsRead: 600,
      duplicatesSkipped: 0,
      parseErrors: 0,
      delivered: { file: 600, plain: 600 },
      alreadyHeld: { file: 250 },
      deadLettered: {},
      schemaDrift: [],
      windowRetries: 0,
      previousCursorMs: null,
      cursorMs: T0 + HOUR,
      durationMs: 1000,
    }).join('\n');
    expect(lines).toMatch(/file=600 \(250 already held/);
    expect(lines).toMatch(/written[^\n]*file=350/);
  });
});
