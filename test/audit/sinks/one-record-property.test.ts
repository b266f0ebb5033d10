/**
 * One event is always exactly one record in each sink's framing, whatever its text holds:
 * random Unicode (astral, lone surrogates) mixed with every control character and every
 * line separator a consumer may split at (Python's `str.splitlines` set: LF, CR, CRLF, VT,
 * FF, FS, GS, RS, NEL, LS, PS). Events are built with raw JSON text, as a replayed or
 * foreign event may carry, so the sinks' own guards are what is tested; the record also
 * reads back to the same document.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EventBuilder } from '../../../src/audit/build-event.ts';
import { PassKeys } from '../../../src/audit/event-key.ts';
import type { AuditEvent } from '../../../src/audit/event.ts';
import { lineSafeJson } from '../../../src/audit/line-safe-json.ts';
import { encodeBulkCreate } from '../../../src/audit/sinks/elasticsearch/encoder.ts';
import { encodeFileLine } from '../../../src/audit/sinks/file/encoder.ts';
import { LineBuffer } from '../../../src/audit/sinks/file/line-buffer.ts';
import { encodeBody, encodeDoc } from '../../../src/audit/sinks/http/encoder.ts';
import { encodeHecEvent } from '../../../src/audit/sinks/splunk-hec/encoder.ts';
import { encodeNdjsonLine } from '../../../src/audit/sinks/stdout/encoder.ts';
import { encodeCef } from '../../../src/audit/sinks/syslog/cef.ts';
import { encodeSyslogMessage, frame, type SyslogFormat } from '../../../src/audit/sinks/syslog/encoder.ts';
import { createTimestampParser } from '../../../src/audit/timestamp.ts';

/** Where a line-splitting consumer cuts (Python `str.splitlines`). */
const LINE_BREAK = /\r\n|[\n\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]/;
const CONTROLS = /[\x00-\x1f\x7f-\x9f\u2028\u2029]/;

const nasty = fc.constantFrom(
  '\n',
  '\r',
  '\r\n',
  '\x0b',
  '\x0c',
  '\x1c',
  '\x1d',
  '\x1e',
  '\x85',
  '\u2028',
  '\u2029',
  '\0',
  '\x7f',
  '\x9b',
  '\ud800',
  '"',
  '\\',
  '|',
  '=',
  ']',
);
const text = fc.array(fc.oneof(fc.string({ unit: 'binary', maxLength: 12 }), nasty), { maxLength: 8 }).map((a) => a.join(''));
const doc = fc.dictionary(text, fc.oneof(text, fc.dictionary(text, text, { maxKeys: 3 })), { maxKeys: 5 });
const event = fc
  .record({ key: text.filter((k) => k.length > 0), doc })
  .map(({ key, doc }): { event: AuditEvent; doc: Record<string, unknown> } => ({
    // Raw JSON.stringify output: U+0085, U+2028 and U+2029 left as they are.
    event: { key, timestampMs: Date.UTC(2026, 0, 1), json: JSON.stringify(doc) },
    doc,
  }));
const events = fc.array(event, { minLength: 1, maxLength: 6 });

function lines(text: string): string[] {
  expect(text.endsWith('\n')).toBe(true);
  return text.slice(0, -1).split(LINE_BREAK);
}

const CEF = {
  vendor: 'v',
  product: 'p',
  version: '1',
  signatureIdField: 'a',
  nameField: 'b',
  severity: 3,
  extensions: { act: 'a', msg: 'b' },
  includeDocument: true,
};

function syslogFormat(format: 'json' | 'cef', framing: 'lf' | 'octet-counting'): SyslogFormat {
  return { pri: 134, hostname: 'h', appName: 'app', procId: '1', msgidField: 'a', sdId: 'x@32473', format, cef: CEF, framing };
}

describe('one event, one record (property)', () => {
  it('NDJSON sinks (stdout, file, http ndjson, HEC, Elasticsearch bulk) write one line per event', () => {
    fc.assert(
      fc.property(events, (list) => {
        for (const { event: e, doc: d } of list) {
          expect(lines(encodeNdjsonLine(e).toString('utf8')).map((l) => JSON.parse(l))).toEqual([d]);
          const [fileLine] = lines(encodeFileLine(e));
          expect(lines(encodeFileLine(e))).toHaveLength(1);
          expect(JSON.parse(fileLine as string)).toMatchObject({ _key: e.key });
          const hec = lines(encodeHecEvent(e, { host: 'h\u2028x' }).toString('utf8'));
          expect(hec).toHaveLength(1);
          expect(JSON.parse(hec[0] as string).event).toEqual(d);
          const bulk = lines(encodeBulkCreate(e, 'audit').toString('utf8'));
          expect(bulk).toHaveLength(2);
          expect(JSON.parse(bulk[0] as string).create._id).toBe(e.key);
          expect(JSON.parse(bulk[1] as string)).toEqual(d);
        }
        const body = encodeBody(
          list.map((x) => encodeDoc(x.event)),
          'ndjson',
        ).toString('utf8');
        expect(lines(body).map((l) => JSON.parse(l))).toEqual(list.map((x) => x.doc));
        const chunks = [
          ...new LineBuffer().chunks(
            list.map((x) => ({ ...x.event, noReservedMembers: true as const })),
            { maxEvents: 1000, maxBytes: 1 << 20 },
          ),
        ];
        expect(lines(chunks.map((c) => c.bytes.toString('utf8')).join('')).map((l) => JSON.parse(l)._key)).toEqual(
          list.map((x) => x.event.key),
        );
      }),
    );
  });

  it('syslog frames one message per event, with no line break or control character inside, in JSON and CEF', () => {
    fc.assert(
      fc.property(events, fc.constantFrom<'json' | 'cef'>('json', 'cef'), (list, format) => {
        const lf = Buffer.concat(list.map((x) => frame(encodeSyslogMessage(x.event, syslogFormat(format, 'lf')), 'lf'))).toString('utf8');
        expect(lines(lf)).toHaveLength(list.length);
        const octets = Buffer.concat(list.map((x) => frame(encodeSyslogMessage(x.event, syslogFormat(format, 'octet-counting')))));
        const messages: string[] = [];
        for (let at = 0; at < octets.length; ) {
          const sp = octets.indexOf(0x20, at);
          const len = Number(octets.subarray(at, sp).toString('ascii'));
          messages.push(octets.subarray(sp + 1, sp + 1 + len).toString('utf8'));
          at = sp + 1 + len;
        }
        expect(messages).toHaveLength(list.length);
        messages.forEach((m, i) => {
          expect(m).not.toMatch(LINE_BREAK);
          const x = list[i] as (typeof list)[number];
          if (format === 'json') expect(JSON.parse(m.slice(m.indexOf('] {') + 2))).toEqual(x.doc);
          else expect(m).not.toMatch(CONTROLS);
        });
      }),
    );
  });

  it('CEF lines carry no raw NUL or other control character', () => {
    fc.assert(
      fc.property(event, ({ event: e }) => {
        expect(encodeCef(e, CEF)).not.toMatch(CONTROLS);
      }),
    );
  });

  it('the event builder writes line-safe JSON whatever the cells hold', () => {
    const parse = createTimestampParser();
    fc.assert(
      fc.property(fc.array(text, { minLength: 2, maxLength: 2 }), ([a, b]) => {
        const builder = new EventBuilder(['Timestamp', 'A', 'B'], { fieldStyle: 'plain', overrides: {}, parseTimestamp: parse });
        const values = ['2026-01-01T00:00:00Z', a as string, b as string];
        const ev = builder.build(values, 1, builder.keyOf(values, new PassKeys()) ?? 'k');
        expect(ev.json).not.toMatch(LINE_BREAK);
        expect(ev.json).toBe(lineSafeJson(ev.json));
        expect(JSON.parse(ev.json)).toMatchObject({ A: a, B: b });
      }),
    );
  });
});
