import { appendFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import type { FileSink } from '../../../src/audit/sinks/file/sink.ts';
import type { Sink } from '../../../src/audit/sinks/sink.ts';
import { T0, makeEvent, makeEvents, memoryLogger, openSink } from './fixtures.ts';
import { eventDoc } from '../../../src/audit/event.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'file-sink-'));
});

const lines = (p: string): Array<Record<string, unknown>> =>
  readFileSync(p, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

/** Rotation order: time stamp, then the same-millisecond sequence suffix. */
function byRotation(a: string, b: string): number {
  const key = (f: string): [string, number] => {
    const m = /\.(\d{8}T\d{9}Z)(?:-(\d+))?\./.exec(f)!;
    return [m[1]!, Number(m[2] ?? 0)];
  };
  const [ta, sa] = key(a);
  const [tb, sb] = key(b);
  return ta < tb ? -1 : ta > tb ? 1 : sa - sb;
}

function clock(start: number): { now: () => number; advance: (ms: number) => void } {
  let t = start;
  return { now: () => t, advance: (ms) => (t += ms) };
}

async function fileSink(extra: Record<string, unknown> = {}, ctx: Record<string, unknown> = {}): Promise<Sink> {
  return openSink({ name: 'archive', type: 'file', path: 'out/audit.ndjson', ...extra }, { configDir: dir, ...ctx });
}

describe('file sink', () => {
  it('appends one line per event with _key/_ts first, relative to configDir, and the data is in the file when write resolves', async () => {
    const sink = await fileSink();
    const events = makeEvents(3);
    const res = await sink.write(events);
    expect(res).toEqual({ delivered: 3, rejected: [] });
    // Read synchronously right after the ack: the bytes are already there (written + fdatasync'd before resolving).
    const got = lines(join(dir, 'out/audit.ndjson'));
    expect(got).toEqual(events.map((e) => ({ _key: e.key, _ts: e.timestampMs, ...eventDoc(e) })));
    expect(readFileSync(join(dir, 'out/audit.ndjson'), 'utf8').startsWith('{"_key":"evt-0","_ts":')).toBe(true);
    await sink.close();
  });

  it('a document from elsewhere with top-level _key/_ts has them replaced, not duplicated', async () => {
    const sink = await fileSink();
    const foreign = makeEvent(0, { _key: 'not-mine', _ts: 1, kept: 'yes' });
    await sink.write([foreign]);
    const [text] = readFileSync(join(dir, 'out/audit.ndjson'), 'utf8').split('\n');
    expect(text!.match(/"_key":/g)).toHaveLength(1);
    expect(JSON.parse(text!)).toMatchObject({ _key: 'evt-0', _ts: foreign.timestampMs, kept: 'yes' });
    await sink.close();
  });

  it('writes multi-byte text byte-exact, and sizes rotation by UTF-8 bytes', async () => {
    const sink = await fileSink({ rotateMaxBytes: 700, maxFiles: 10 });
    const events = Array.from({ length: 6 }, (_, i) => makeEvent(i, { note: `é ü ✓ 🔐 ${'ß'.repeat(40 * i)}` }));
    await sink.write(events);
    await sink.close();
    const files = readdirSync(join(dir, 'out'));
    const all = files
      .filter((f) => f !== 'audit.ndjson')
      .sort(byRotation)
      .concat('audit.ndjson');
    for (const f of all) {
      const bytes = readFileSync(join(dir, 'out', f));
      // Either within the limit, or a single line that is larger than the limit on its own.
      if (bytes.length > 700) expect(bytes.toString('utf8').split('\n').filter(Boolean)).toHaveLength(1);
    }
    const got = all.flatMap((f) => lines(join(dir, 'out', f)));
    expect(got.map((l) => l['note'])).toEqual(events.map((e) => eventDoc(e)['note']));
  });

  it('rotates by size: no file exceeds rotateMaxBytes, nothing lost, order kept, retention applied', async () => {
    const c = clock(T0);
    const sink = await fileSink({ rotateMaxBytes: 1000, maxFiles: 3 }, { now: c.now });
    const events = makeEvents(40);
    for (let i = 0; i < 40; i += 8) {
      await sink.write(events.slice(i, i + 8));
      c.advance(1); // distinct rotation names
    }
    await sink.close();
    const files = readdirSync(join(dir, 'out')).sort();
    const rotated = files.filter((f) => /^audit\.\d{8}T\d{9}Z(-\d+)?\.ndjson$/.test(f)).sort(byRotation);
    expect(rotated).toHaveLength(3); // maxFiles: older ones deleted
    for (const f of files) expect(statSync(join(dir, 'out', f)).size).toBeLessThanOrEqual(1000);
    const kept = [...rotated, 'audit.ndjson'].flatMap((f) => lines(join(dir, 'out', f)).map((l) => l['_key']));
    // The newest events survive in order; the deleted files held exactly the oldest ones.
    expect(kept).toEqual(events.slice(40 - kept.length).map((e) => e.key));
  });

  it('rotates by time bucket (injectable clock) and names the file with the UTC rotation time', async () => {
    const c = clock(Date.UTC(2026, 0, 15, 10, 59, 0));
    const sink = await fileSink({ rotateEveryMinutes: 60 }, { now: c.now });
    await sink.write(makeEvents(2));
    c.advance(30_000); // 10:59:30, same hour
    await sink.write(makeEvents(1, 2));
    expect(readdirSync(join(dir, 'out'))).toEqual(['audit.ndjson']);
    c.advance(45_000); // 11:00:15, next bucket
    await sink.write(makeEvents(1, 3));
    await sink.close();
    expect(readdirSync(join(dir, 'out')).sort()).toEqual(['audit.20260115T110015000Z.ndjson', 'audit.ndjson']);
    expect(lines(join(dir, 'out/audit.20260115T110015000Z.ndjson')).map((l) => l['_key'])).toEqual(['evt-0', 'evt-1', 'evt-2']);
    expect(lines(join(dir, 'out/audit.ndjson')).map((l) => l['_key'])).toEqual(['evt-3']);
  });

  it('cuts a torn last line on open, then appends cleanly', async () => {
    const path = join(dir, 'out/audit.ndjson');
    const first = await fileSink();
    await first.write(makeEvents(2));
    await first.close();
    appendFileSync(path, '{"_key":"evt-2","_ts":17684'); // crash mid-write
    const log = memoryLogger();
    const sink = await fileSink({}, { logger: log.logger });
    expect(log.text()).toContain('torn last line');
    await sink.write(makeEvents(1, 2));
    await sink.close();
    expect(lines(path).map((l) => l['_key'])).toEqual(['evt-0', 'evt-1', 'evt-2']);
  });

  it('a file that is all torn (no newline at all) is emptied', async () => {
    const path = join(dir, 'out/audit.ndjson');
    const s0 = await fileSink();
    await s0.close();
    writeFileSync(path, '{"_key":"half');
    const sink = await fileSink();
    expect(readFileSync(path, 'utf8')).toBe('');
    await sink.close();
  });

  it('recentKeys streams the current and the relevant rotated files, filtering by event time', async () => {
    const c = clock(T0 + 3_600_000);
    const sink = await fileSink({ rotateMaxBytes: 700 }, { now: c.now });
    // Old events land in a file rotated long before sinceMs: that file must not even be read.
    await sink.write([makeEvent(0, {}, T0 - 86_400_000), makeEvent(1, {}, T0 - 86_400_000)]);
    const oldRotation = T0 - 86_400_000 + 60_000;
    c.advance(-(c.now() - oldRotation));
    await sink.write([makeEvent(2, {}, T0 - 1000), makeEvent(3, {}, T0 + 1000)]);
    c.advance(3_600_000 * 30);
    await sink.write([makeEvent(4, {}, T0 + 2000), makeEvent(5, {}, T0 + 3000)]);
    await sink.close();
    const reopened = (await fileSink({ rotateMaxBytes: 700 }, { now: c.now })) as FileSink;
    expect([...(await reopened.recentKeys(T0))].sort()).toEqual(['evt-3', 'evt-4', 'evt-5']);
    expect([...(await reopened.recentKeys(T0 - 90_000_000))].sort()).toEqual(['evt-0', 'evt-1', 'evt-2', 'evt-3', 'evt-4', 'evt-5']);
    await reopened.close();
  });

  it('recentKeys ignores a torn line it was not allowed to repair yet and lines that are not ours', async () => {
    const path = join(dir, 'out/audit.ndjson');
    const sink = (await fileSink()) as FileSink;
    await sink.write(makeEvents(2));
    appendFileSync(path, 'not json\n{"no":"key"}\n');
    expect([...(await sink.recentKeys(0))].sort()).toEqual(['evt-0', 'evt-1']);
    await sink.close();
  });

  it('rejects an event it cannot encode instead of dropping it, and still writes the others', async () => {
    const sink = await fileSink();
    const broken = { ...makeEvent(1), timestampMs: Number.NaN };
    const res = await sink.write([makeEvent(0), broken, makeEvent(2)]);
    expect(res.delivered).toBe(2);
    expect(res.rejected.map((r) => [r.event.key, r.code])).toEqual([['evt-1', 'encode_failed']]);
    await sink.close();
  });

  it('refuses writes after close', async () => {
    const sink = await fileSink();
    await sink.close();
    await expect(sink.write(makeEvents(1))).rejects.toMatchObject({ kind: 'fatal' });
    expect(existsSync(join(dir, 'out/audit.ndjson'))).toBe(true);
  });
});
