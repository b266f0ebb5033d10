/**
 * LineBuffer: the bytes of each chunk are exactly those of encodeFileLine() for its events,
 * line sizes are the lines' byte lengths, and chunks split at maxEvents / maxBytes (a single
 * larger line alone), also once the buffer has had to grow.
 */
import { describe, expect, it } from 'vitest';
import type { AuditEvent } from '../../../src/audit/event.ts';
import { encodeFileLine } from '../../../src/audit/sinks/file/encoder.ts';
import { LineBuffer, type FileChunk } from '../../../src/audit/sinks/file/line-buffer.ts';
import { T0, makeEvent } from './fixtures.ts';

const BIG = { maxEvents: 100_000, maxBytes: 256 * 1024 * 1024 };

/** As the event builder makes them: marked as carrying no top-level `_key`/`_ts`. */
function built(i: number, extra: Record<string, unknown> = {}): AuditEvent {
  return { ...makeEvent(i, extra), noReservedMembers: true };
}

/** The chunks, with their bytes copied out (a chunk's bytes are only valid until the next one). */
function collect(lb: LineBuffer, events: readonly AuditEvent[], limits = BIG): FileChunk[] {
  const out: FileChunk[] = [];
  for (const c of lb.chunks(events, limits)) out.push({ ...c, bytes: Buffer.from(c.bytes), events: [...c.events], sizes: [...c.sizes] });
  return out;
}

function expectedBytes(events: readonly AuditEvent[]): Buffer {
  return Buffer.concat(events.map((e) => Buffer.from(encodeFileLine(e), 'utf8')));
}

function expectExact(chunks: FileChunk[], events: readonly AuditEvent[]): void {
  for (const c of chunks) {
    expect(c.bytes.equals(expectedBytes(c.events))).toBe(true);
    expect(c.sizes).toEqual(c.events.map((e) => Buffer.byteLength(encodeFileLine(e), 'utf8')));
    expect(c.sizes.reduce((a, b) => a + b, 0)).toBe(c.bytes.length);
  }
  expect(chunks.flatMap((c) => c.events)).toEqual(events);
  expect(Buffer.concat(chunks.map((c) => c.bytes)).toString('utf8')).toBe(events.map(encodeFileLine).join(''));
}

const VARIED: AuditEvent[] = [
  built(0),
  built(1, { nested: { deep: [1, 2, { x: null }] }, 'event.outcome': 'success' }),
  { key: 'empty-doc', timestampMs: T0 + 5, json: '{}', noReservedMembers: true },
  { key: 'empty-doc-unmarked', timestampMs: T0 + 6, json: '{}' },
  built(2, { 'user.name': 'José Müller', note: 'clé 🔐 密钥', emoji: '👩‍💻' }),
  // Not from the builder: top-level `_key`/`_ts` are dropped, as encodeFileLine does.
  { key: 'foreign', timestampMs: T0 + 7, json: JSON.stringify({ _key: 'spoofed', a: 1, _ts: 42, b: 'é' }) },
  { key: 'foreign-only', timestampMs: T0 + 8, json: JSON.stringify({ _key: 'x', _ts: 1 }) },
  // Unmarked, but no reserved member: written as it is.
  { key: 'plain-unmarked', timestampMs: T0 + 9, json: JSON.stringify({ a: '"_k"' }) },
  // Keys and values that need JSON escaping, in the key too.
  {
    key: 'quote"back\\slash\nnl\u0001ctl\u2028ls é',
    timestampMs: T0 + 10.9,
    json: JSON.stringify({ 'we"ird\\key\n': 'tab\there', ü: '\u0000' }),
    noReservedMembers: true,
  },
  // A fractional and a negative time are truncated the same way.
  { key: 'neg', timestampMs: -1234.7, json: JSON.stringify({ a: 1 }), noReservedMembers: true },
];

describe('LineBuffer', () => {
  it('writes exactly the bytes of encodeFileLine, with each line size, for all kinds of documents', () => {
    const chunks = collect(new LineBuffer(), VARIED);
    expect(chunks).toHaveLength(1);
    expect(chunks[0]!.rejected).toEqual([]);
    expectExact(chunks, VARIED);
    const lines = chunks[0]!.bytes.toString('utf8').split('\n');
    expect(lines.pop()).toBe('');
    const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    // The foreign document's own `_key`/`_ts` are gone, ours are there once.
    expect(parsed[5]).toEqual({ _key: 'foreign', _ts: T0 + 7, a: 1, b: 'é' });
    expect(lines[5]!.match(/"_key"/g)).toHaveLength(1);
    expect(parsed[6]).toEqual({ _key: 'foreign-only', _ts: T0 + 8 });
    expect(parsed[2]).toEqual({ _key: 'empty-doc', _ts: T0 + 5 });
    expect(parsed[8]!['_key']).toBe(VARIED[8]!.key);
    expect(parsed[9]!['_ts']).toBe(-1234);
  });

  it('splits at maxEvents', () => {
    const events = Array.from({ length: 10 }, (_, i) => built(i));
    const chunks = collect(new LineBuffer(), events, { maxEvents: 3, maxBytes: BIG.maxBytes });
    expect(chunks.map((c) => c.events.length)).toEqual([3, 3, 3, 1]);
    expectExact(chunks, events);
  });

  it('splits at maxBytes, and an oversized line travels alone', () => {
    const small = (i: number): AuditEvent => built(i, { pad: 'a'.repeat(100) });
    const size = Buffer.byteLength(encodeFileLine(small(10)));
    const huge = built(99, { pad: 'é'.repeat(2000) });
    const events = [small(10), small(11), small(12), huge, small(13), small(14), huge, huge, small(15)];
    const maxBytes = size * 2 + 10; // two small lines fit, three do not
    const chunks = collect(new LineBuffer(), events, { maxEvents: 1000, maxBytes });
    expect(chunks.map((c) => c.events.map((e) => e.key))).toEqual([
      ['evt-10', 'evt-11'],
      ['evt-12'],
      ['evt-99'],
      ['evt-13', 'evt-14'],
      ['evt-99'],
      ['evt-99'],
      ['evt-15'],
    ]);
    for (const c of chunks) if (c.events.length > 1) expect(c.bytes.length).toBeLessThanOrEqual(maxBytes);
    expect(chunks[2]!.bytes.length).toBeGreaterThan(maxBytes);
    expectExact(chunks, events);
  });

  it('a chunk exactly at maxBytes is not split', () => {
    const events = [built(1), built(2), built(3)];
    const total = expectedBytes(events).length;
    expect(collect(new LineBuffer(), events, { maxEvents: 10, maxBytes: total }).map((c) => c.events.length)).toEqual([3]);
    expect(collect(new LineBuffer(), events, { maxEvents: 10, maxBytes: total - 1 }).map((c) => c.events.length)).toEqual([2, 1]);
  });

  it('stays exact when a chunk outgrows the initial 1 MiB buffer, and when reused afterwards', () => {
    const lb = new LineBuffer();
    const events = Array.from({ length: 3000 }, (_, i) => built(i, { pad: (i % 7 === 0 ? 'é' : 'p').repeat(1024) }));
    const one = collect(lb, events);
    expect(one).toHaveLength(1);
    expect(one[0]!.bytes.length).toBeGreaterThan(3 * 1024 * 1024);
    expectExact(one, events);
    // Same buffer, now split in byte-limited chunks, then a smaller batch.
    const split = collect(lb, events, { maxEvents: 100_000, maxBytes: 1536 * 1024 });
    expect(split.length).toBeGreaterThan(2);
    expectExact(split, events);
    const few = VARIED.slice(0, 4);
    expectExact(collect(lb, few), few);
  });

  it('a single line larger than the buffer is written whole', () => {
    const lb = new LineBuffer();
    const events = [built(1), built(2, { pad: '🔐'.repeat(400_000) }), built(3)];
    const chunks = collect(lb, events, { maxEvents: 1000, maxBytes: 4096 });
    expect(chunks.map((c) => c.events.length)).toEqual([1, 1, 1]);
    expectExact(chunks, events);
  });

  it('rejects an event with a non-finite timestamp as encode_failed and writes the others', () => {
    const bad = [
      { ...built(2), timestampMs: Number.NaN },
      { ...built(4), timestampMs: Number.POSITIVE_INFINITY },
      { key: 'unmarked-bad', timestampMs: Number.NEGATIVE_INFINITY, json: '{"_key":"x"}' },
    ];
    const events = [built(1), bad[0]!, built(3), bad[1]!, bad[2]!, built(5)];
    const chunks = collect(new LineBuffer(), events, { maxEvents: 2, maxBytes: BIG.maxBytes });
    const good = [events[0]!, events[2]!, events[5]!];
    expectExact(chunks, good);
    const rejected = chunks.flatMap((c) => c.rejected);
    expect(rejected.map((r) => r.event)).toEqual(bad);
    for (const r of rejected) expect(r).toMatchObject({ code: 'encode_failed', reason: expect.stringContaining('timestamp') });
    // Only rejections: one chunk carries them, with no bytes.
    const only = collect(new LineBuffer(), [bad[0]!]);
    expect(only).toHaveLength(1);
    expect(only[0]!.events).toEqual([]);
    expect(only[0]!.bytes.length).toBe(0);
    expect(only[0]!.rejected.map((r) => r.code)).toEqual(['encode_failed']);
  });

  it('yields nothing for no events', () => {
    expect(collect(new LineBuffer(), [])).toEqual([]);
  });
});
