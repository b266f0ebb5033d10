import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EventBuilder } from '../../src/audit/build-event.ts';
import { PassKeys } from '../../src/audit/event-key.ts';
import type { AuditEvent } from '../../src/audit/event.ts';
import { planColumns, uniqueColumnNames } from '../../src/audit/columns.ts';
import { createTimestampParser } from '../../src/audit/timestamp.ts';
import { eventDoc } from '../../src/audit/event.ts';
import { encodeFileLine } from '../../src/audit/sinks/file/encoder.ts';
import { lineSafeJson } from '../../src/audit/line-safe-json.ts';

const opts = { fieldStyle: 'ecs' as const, overrides: {}, parseTimestamp: createTimestampParser() };

/** One window pass per builder: its rows share one occurrence counter, as in WindowPass. */
const passes = new WeakMap<EventBuilder, PassKeys>();
function build(b: EventBuilder, values: string[], ts: number): AuditEvent {
  let occ = passes.get(b);
  if (!occ) passes.set(b, (occ = new PassKeys()));
  return b.build(values, ts, b.keyOf(values, occ) ?? '(listed twice)');
}

describe('EventBuilder', () => {
  it('keys a row by the SHA-256 of its canonical form (names sorted, lengths prefixed)', () => {
    const cols = ['Timestamp', 'Event Name', 'User Email'];
    const row = ['2026-11-01T00:00:00.000Z', 'Logged in', 'x@example.com'];
    // Written out by hand: a change here would re-deliver every event of the overlap after an upgrade.
    const canonical = '10:Event Name9:Logged in;9:Timestamp24:2026-11-01T00:00:00.000Z;10:User Email13:x@example.com;';
    const expected = createHash('sha256').update(canonical).digest('hex');
    expect(build(new EventBuilder(cols, opts), row, 1).key).toBe(expected);
  });

  it('numbers identical rows over the whole pass (#2, #3), whatever comes between them', () => {
    const e = new EventBuilder(['Timestamp', 'Event Name'], opts);
    const a = ['2026-11-01T00:00:00.000Z', 'Logged in'];
    const k = build(e, a, 1).key;
    expect(build(e, a, 1).key).toBe(`${k}#2`);
    expect(build(e, ['2026-11-01T00:00:00.001Z', 'Logged in'], 2).key).not.toContain('#');
    expect(build(e, a, 1).key).toBe(`${k}#3`);
    // A new pass over the same window (a re-read, in another order) numbers the same keys.
    const again = new EventBuilder(['Timestamp', 'Event Name'], opts);
    const keys = [
      build(again, ['2026-11-01T00:00:00.001Z', 'Logged in'], 2),
      build(again, a, 1),
      build(again, a, 1),
      build(again, a, 1),
    ].map((x) => x.key);
    expect(keys.slice(1).sort()).toEqual([k, `${k}#2`, `${k}#3`].sort());
  });

  it('derives the same hash key whatever the column order', () => {
    const a = new EventBuilder(['Timestamp', 'Event Name', 'User Email'], opts);
    const b = new EventBuilder(['User Email', 'Timestamp', 'Event Name'], opts);
    const ka = build(a, ['2026-11-01T00:00:00Z', 'Logged in', 'x@example.com'], 1).key;
    const kb = build(b, ['x@example.com', '2026-11-01T00:00:00Z', 'Logged in'], 1).key;
    expect(ka).toMatch(/^[0-9a-f]{64}$/);
    expect(kb).toBe(ka);
    // A different value is a different event.
    expect(build(b, ['y@example.com', '2026-11-01T00:00:00Z', 'Logged in'], 1).key).not.toBe(ka);
  });

  it('is not fooled by values that contain what looks like a separator', () => {
    const e = new EventBuilder(['a', 'b'], opts);
    expect(build(e, ['x;1:y', ''], 1).key).not.toBe(build(e, ['x', '1:y'], 1).key);
  });

  it('plain style keeps colliding original columns under <name>_raw', () => {
    const e = new EventBuilder(['timestamp', 'action', 'id'], { ...opts, fieldStyle: 'plain' });
    const ev = build(e, ['2026-11-01 00:00:00', 'login', '42'], Date.parse('2026-11-01T00:00:00Z'));
    expect(ev.key).toBe('42');
    expect(eventDoc(ev)).toEqual({
      timestamp: '2026-11-01T00:00:00.000Z',
      id: '42',
      action: 'login',
      timestamp_raw: '2026-11-01 00:00:00',
      action_raw: 'login',
      id_raw: '42',
    });
  });
});

describe('EventBuilder documents', () => {
  it('an event kept as bytes is stored (dead letters) and read back as the same document, across arenas', () => {
    // Enough rows, and one document larger than an arena, that the builder moves to new buffers:
    // every event still reads its own bytes, and JSON (a dead letter's form) carries the text.
    const e = new EventBuilder(['Timestamp', 'Details'], opts);
    const pass = new PassKeys();
    const rows = Array.from({ length: 3_000 }, (_, i) => ['2026-11-01T00:00:00.000Z', `détails ${i} ${'é'.repeat(i % 50)}`]);
    rows.splice(1_500, 0, ['2026-11-01T00:00:00.000Z', 'x'.repeat(600_000)]);
    const events = rows.map((r) => e.build(r, 1, e.keyOf(r, pass) ?? 'k'));
    events.forEach((ev, i) => {
      expect((eventDoc(ev) as { platform: { audit: Record<string, string> } }).platform.audit['Details']).toBe(rows[i]?.[1]);
    });
    const stored = JSON.parse(JSON.stringify({ event: events[1_500] })) as { event: AuditEvent };
    expect(stored.event).toEqual({ key: events[1_500]?.key, timestampMs: 1, json: events[1_500]?.json, noReservedMembers: true });
  });

  it('writes every value exactly as JSON.stringify would (line separators as \\u escapes), row after row of any length and content (property)', () => {
    // Values with quotes, backslashes, control characters, lone surrogates and empty cells,
    // in rows of varying length through one builder: what a document holds is the row, never
    // a piece of the row before it.
    const cols = ['Timestamp', 'Action', 'Email', 'IP', 'Details', 'Extra'];
    const cell = fc.oneof(fc.string({ unit: 'binary' }), fc.constantFrom('', '"', '\\', '\u2028', '\ud800', 'x'.repeat(300)));
    const row = fc.array(cell, { minLength: 1, maxLength: cols.length });
    fc.assert(
      fc.property(fc.constantFrom<'ecs' | 'plain'>('ecs', 'plain'), fc.array(row, { minLength: 1, maxLength: 6 }), (fieldStyle, rows) => {
        const e = new EventBuilder(cols, { ...opts, fieldStyle });
        const pass = new PassKeys();
        for (const cells of rows) {
          const values = ['2026-11-01T00:00:00.000Z', ...cells.slice(1)];
          const ev = e.build(values, 1, e.keyOf(values, pass) ?? 'k');
          const doc = JSON.parse(ev.json) as Record<string, unknown> & { platform?: { audit: Record<string, string> } };
          const originals = fieldStyle === 'ecs' ? (doc.platform as { audit: Record<string, string> }).audit : doc;
          cols.forEach((c, i) => {
            if (i < values.length) expect(originals[c]).toBe(values[i]);
          });
          const members = cols.map((c, i) => `${JSON.stringify(c)}:${JSON.stringify(values[i] ?? '')}`).join(',');
          expect(ev.json).toContain(lineSafeJson(members));
        }
      }),
    );
  });

  it('keeps every column in header order, whatever its name, with values escaped', () => {
    const cols = ['Timestamp', '2', '__proto__', 'Details'];
    const e = new EventBuilder(cols, opts);
    const ev = build(e, ['2026-11-01T00:00:00.000Z', 'two', 'proto', '{"a":"x,y","q":"\\"}\n'], Date.parse('2026-11-01T00:00:00Z'));
    const doc = eventDoc(ev) as { platform: { audit: Record<string, string> } };
    expect(ev.json.indexOf('"Timestamp"')).toBeLessThan(ev.json.indexOf('"2"'));
    expect(Object.hasOwn(doc.platform.audit, '__proto__')).toBe(true);
    expect(Object.entries(doc.platform.audit)).toEqual(
      expect.arrayContaining([
        ['2', 'two'],
        ['__proto__', 'proto'],
        ['Details', '{"a":"x,y","q":"\\"}\n'],
      ]),
    );
    expect(doc).toMatchObject({
      '@timestamp': '2026-11-01T00:00:00.000Z',
      event: { id: ev.key, kind: 'event', dataset: 'platform.audit' },
    });
  });

  it('plain style never gives two members the same name', () => {
    const e = new EventBuilder(['timestamp', 'id', 'id_raw', '_key'], { ...opts, fieldStyle: 'plain' });
    const ev = build(e, ['2026-11-01T00:00:00Z', '7', 'r', 'k'], Date.parse('2026-11-01T00:00:00Z'));
    const names = [...ev.json.matchAll(/"([^"]+)":/g)].map((m) => m[1]);
    expect(new Set(names).size).toBe(names.length);
    expect(eventDoc(ev)).toEqual({
      timestamp: '2026-11-01T00:00:00.000Z',
      id: '7',
      timestamp_raw: '2026-11-01T00:00:00Z',
      id_raw_raw: '7',
      id_raw: 'r',
      _key_raw: 'k',
    });
  });
});

describe('EventBuilder and the file line', () => {
  it.each(['ecs', 'plain'] as const)(
    '%s: documents are marked free of top-level _key/_ts, and are, even with such columns',
    (fieldStyle) => {
      const e = new EventBuilder(['Timestamp', '_key', '_ts'], { ...opts, fieldStyle });
      const ts = Date.parse('2026-11-01T00:00:00Z');
      const ev = build(e, ['2026-11-01T00:00:00Z', 'k', '1'], ts);
      expect(ev.noReservedMembers).toBe(true);
      // The file sink trusts the mark and does not look: a top-level duplicate would win in JSON.parse.
      const line = JSON.parse(encodeFileLine(ev)) as Record<string, unknown>;
      expect(line['_key']).toBe(ev.key);
      expect(line['_ts']).toBe(ts);
    },
  );
});

describe('column detection', () => {
  it('finds roles among common spellings, ignoring case and separators', () => {
    expect(planColumns(['created_at', 'EVENT-NAME', 'userEmail', 'Source IP', 'uuid'])).toEqual({
      timestamp: 0,
      action: 1,
      email: 2,
      ip: 3,
      id: 4,
    });
    expect(planColumns(['When', 'What'], { timestamp: 'when' })).toMatchObject({ timestamp: 0, id: -1, action: -1 });
  });

  it('names empty and repeated header cells uniquely', () => {
    expect(uniqueColumnNames(['a', '', 'a', ' b '])).toEqual(['a', 'column_2', 'a_2', 'b']);
  });
});
