/**
 * Exactly-once under SIGKILL: a child process runs the real engine into the real file sink
 * and is killed at random points of a large export (mid-download, mid-write, between a
 * sink's ack and the commit) at least 10 times; a last run completes. The idempotent file
 * sink must then hold every event exactly once, the non-idempotent one every event at least once.
 * The state is compacted after nearly every commit, so kills also land inside a compaction.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/index.ts';
import { digestsOf } from '../../src/audit/digest/window-digest.ts';
import { FileAuditStateStore } from '../../src/audit/state/file-store.ts';
import { JsonlSink } from './support/jsonl-sink.ts';
import { readFile } from 'node:fs/promises';
import { mulberry32 } from '../../src/simulator/prng.ts';

const CHILD = fileURLToPath(new URL('./support/export-child.ts', import.meta.url));
const T0 = Date.parse('2026-11-01T00:00:00Z');
const HOURS = 8;
const TOKEN = 'crash-token';

let sim: Simulator;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'audit-crash-'));
  // ~48k events, CRLF and multi-line cells, over 8 one-hour windows.
  sim = await startSimulator({
    tokens: [{ token: TOKEN }],
    recordRequests: false,
    audit: { startAt: new Date(T0).toISOString(), eventsPerHour: 6000, idColumn: true, crlf: true },
  });
});
afterAll(async () => {
  await sim?.close();
  await rm(dir, { recursive: true, force: true });
});

/** A seeded PRNG (the simulator's) so a failure can be replayed with the same kill points. */
const prng = mulberry32;

interface ChildRun {
  child: ChildProcess;
  /** Resolves with the number of progress lines seen and whether it finished. */
  exited: Promise<{ done: boolean; progress: number; code: number | null; signal: NodeJS.Signals | null }>;
  onProgress(cb: (n: number) => void): void;
}

function startChild(args: Record<string, unknown>): ChildRun {
  const child = spawn(process.execPath, [CHILD, JSON.stringify(args)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let progress = 0;
  let done = false;
  let listener: ((n: number) => void) | undefined;
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  createInterface({ input: child.stdout! }).on('line', (line) => {
    const msg = JSON.parse(line) as { progress?: string; done?: boolean };
    if (msg.done) done = true;
    if (msg.progress) listener?.(++progress);
  });
  const exited = new Promise<{ done: boolean; progress: number; code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('exit', (code, signal) => {
      if (code !== 0 && signal === null) process.stderr.write(`child failed: ${stderr}\n`);
      resolve({ done, progress, code, signal });
    });
  });
  return { child, exited, onProgress: (cb) => (listener = cb) };
}

describe('crash safety', () => {
  it('delivers exactly once into the file sink across at least 10 SIGKILLs at random points', async () => {
    const rnd = prng(Number(process.env['AUDIT_CRASH_SEED'] ?? 20261101));
    const args = {
      url: sim.url,
      token: TOKEN,
      stateDir: join(dir, 'state'),
      sinkPath: join(dir, 'out', 'audit.ndjson'),
      plainPath: join(dir, 'out', 'plain.jsonl'),
      tenant: 'crash',
      nowMs: T0 + HOURS * 3_600_000,
      // A compaction of the state after nearly every commit, so kills also land inside one.
      compactBytes: 32 * 1024,
      audit: {
        windowMinutes: 60,
        overlapMinutes: 15,
        settleSeconds: 0,
        batchSize: 250,
        checkpointEvents: 1000,
        backfill: { from: new Date(T0).toISOString() },
      },
    };
    let kills = 0;
    let finished = false;
    for (let attempt = 0; attempt < 40 && !finished; attempt++) {
      const run = startChild(args);
      if (kills < 12) {
        // Kill after a random number of progress events, plus a random delay inside the next step.
        const afterProgress = Math.floor(rnd() * 6);
        const delayMs = Math.floor(rnd() * 120);
        run.onProgress((n) => {
          if (n === afterProgress + 1) setTimeout(() => run.child.kill('SIGKILL'), delayMs);
        });
      }
      const r = await run.exited;
      if (r.signal === 'SIGKILL') kills++;
      else {
        expect(r.code).toBe(0);
        finished = r.done && kills >= 10;
      }
    }
    expect(kills).toBeGreaterThanOrEqual(10);
    expect(finished).toBe(true);

    const expected = [...sim.audit.eventsIn(new Date(T0).toISOString(), new Date(args.nowMs).toISOString())].map((e) => e.id).sort();
    expect(expected.length).toBeGreaterThan(40_000);
    const text = await readFile(args.sinkPath, 'utf8');
    const fileKeys = text
      .split('\n')
      .filter(Boolean)
      .map((l) => (JSON.parse(l) as { _key: string })._key);
    const seen = new Set<string>();
    const dups = fileKeys.filter((k) => (seen.has(k) ? true : (seen.add(k), false)));
    expect(dups).toEqual([]);
    expect(fileKeys.sort()).toEqual(expected);
    // The non-idempotent sink: nothing lost (duplicates are allowed after a crash).
    expect([...new Set(await new JsonlSink('plain', args.plainPath).keys())].sort()).toEqual(expected);
    const st = await new FileAuditStateStore(args.stateDir, 'crash').load();
    expect(st.cursorMs).toBe(args.nowMs);
    // The window digests counted every event once, whatever the kills and compactions (what `audit verify` compares).
    const events = [...sim.audit.eventsIn(new Date(T0).toISOString(), new Date(args.nowMs).toISOString())];
    expect(st.digests.windows).toEqual(
      digestsOf(
        events.map((e) => [e.id, e.timestampMs] as const),
        st.digests.windowMs ?? 0,
      ),
    );
  }, 120_000);
});
