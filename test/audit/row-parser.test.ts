/**
 * RowParser on its own: what a body parses into does not depend on how it was cut into
 * chunks (records, physical lines, bad rows with their raw text and place between the good
 * records), checked against a small hand-written reference parser that works on the decoded
 * text (no byte offsets) and against csv-parse/sync for the good values.
 */
import { parse as parseSync } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { MAX_RAW_CHARS, RowParser, isBadRow, type CsvItem } from '../../src/audit/csv/row-parser.ts';

type Item = { kind: 'rec'; values: string[]; line: number } | { kind: 'bad'; line: number; raw: string; code: string };

interface Parsed {
  items: Item[];
  /** The items of each write() and of end(), as returned. */
  chunks: CsvItem[][];
  /** Each bad row with its reason and the global index of the good record it came before. */
  bad: Array<{ line: number; raw: string; code: string; reason: string; beforeRecord: number }>;
}

function cut(buf: Buffer, size: number): Buffer[] {
  const parts: Buffer[] = [];
  for (let i = 0; i < buf.length; i += size) parts.push(buf.subarray(i, i + size));
  return parts;
}

/** Feeds the body chunk by chunk (a copy of each chunk) and flattens the items in file order. */
async function parseChunks(chunks: Buffer[]): Promise<Parsed> {
  const p = new RowParser();
  const out: CsvItem[][] = [];
  for (const c of chunks) out.push(p.write(Buffer.from(c)));
  out.push(await p.end());
  const items: Item[] = [];
  const bad: Parsed['bad'] = [];
  let records = 0;
  for (const item of out.flat()) {
    if (isBadRow(item)) {
      items.push({ kind: 'bad', line: item.line, raw: item.raw, code: item.code });
      bad.push({ line: item.line, raw: item.raw, code: item.code, reason: item.reason, beforeRecord: records });
    } else {
      items.push({ kind: 'rec', values: item.values, line: item.line });
      records++;
    }
  }
  return { items, chunks: out, bad };
}

function parseText(text: string | Buffer, size = Number.POSITIVE_INFINITY): Promise<Parsed> {
  const buf = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
  return parseChunks(Number.isFinite(size) ? cut(buf, size) : buf.length > 0 ? [buf] : []);
}

/**
 * Reference: a plain CSV reader over the decoded text. Records end at LF or CRLF outside
 * quotes; a quoted cell ends at a quote not followed by another; blank lines are skipped;
 * a record with another number of cells than the first one is bad; an open quote at the end
 * makes the rest of the body one bad row. Inputs must close quotes right before `,` or a
 * line break (no relaxed closing quotes).
 */
function reference(text: string): Item[] {
  const s = text.startsWith('\uFEFF') ? text.slice(1) : text;
  const out: Item[] = [];
  let i = 0;
  let line = 1;
  let width = -1;
  const stripBreak = (raw: string): string => raw.replace(/\r?\n$/, '');
  while (i < s.length) {
    // Blank lines.
    if (s[i] === '\n') {
      i++;
      line++;
      continue;
    }
    if (s[i] === '\r' && s[i + 1] === '\n') {
      i += 2;
      line++;
      continue;
    }
    const start = i;
    const startLine = line;
    const values: string[] = [];
    let open = false;
    for (;;) {
      let value = '';
      if (s[i] === '"') {
        i++;
        let closed = false;
        while (i < s.length) {
          if (s[i] === '"') {
            if (s[i + 1] === '"') {
              value += '"';
              i += 2;
              continue;
            }
            i++;
            closed = true;
            break;
          }
          if (s[i] === '\n') line++;
          value += s[i++];
        }
        if (!closed) {
          open = true;
          break;
        }
      } else {
        while (i < s.length && s[i] !== ',' && s[i] !== '\n' && !(s[i] === '\r' && s[i + 1] === '\n')) value += s[i++];
      }
      values.push(value);
      if (s[i] === ',') {
        i++;
        continue;
      }
      break;
    }
    if (open) {
      out.push({ kind: 'bad', line: startLine, raw: stripBreak(s.slice(start)), code: 'CSV_QUOTE_NOT_CLOSED' });
      break;
    }
    const rawEnd = i;
    if (s[i] === '\r') i += 2;
    else if (s[i] === '\n') i += 1;
    if (i > rawEnd) line++;
    if (width === -1) width = values.length;
    if (values.length !== width)
      out.push({ kind: 'bad', line: startLine, raw: s.slice(start, rawEnd), code: 'CSV_RECORD_INCONSISTENT_FIELDS_LENGTH' });
    else out.push({ kind: 'rec', values, line: startLine });
  }
  return out;
}

function syncRecords(text: string): string[][] {
  return parseSync(text, {
    bom: true,
    relax_quotes: true,
    skip_empty_lines: true,
    record_delimiter: ['\r\n', '\n'],
    skip_records_with_error: true,
  }) as string[][];
}

const SIZES = [1, 2, 3, 7, 64, Number.POSITIVE_INFINITY];

/** Everything at once: BOM, CRLF and LF, blank lines, quoted line breaks, ragged rows, multi-byte text, an open quote at the end. */
const SAMPLE =
  '\uFEFFid,name,note\r\n' + // 1
  '1,"José",plain\r\n' + // 2
  '\r\n' + // 3 blank
  '2,"three\r\nline\ncell",after\n' + // 4-6
  '3,🔐 key,"x ""q"" y"\n' + // 7
  '\n' + // 8 blank
  '\n' + // 9 blank
  '4,short\r\n' + // 10 ragged (2 cells)
  '5,café,ok\n' + // 11
  '6,"multi\nline",ragged,🔐é\n' + // 12-13 ragged (4 cells)
  '7,"a,b",c\r\n' + // 14
  '8,x\n' + // 15 ragged, right before another ragged row
  '9,y,z,w\n' + // 16 ragged
  '10,"end",ok\n' + // 17
  '11,"never closed,\r\nstill 🔐 open\n'; // 18-19 unterminated quote

const SAMPLE_EXPECTED: Item[] = [
  { kind: 'rec', values: ['id', 'name', 'note'], line: 1 },
  { kind: 'rec', values: ['1', 'José', 'plain'], line: 2 },
  { kind: 'rec', values: ['2', 'three\r\nline\ncell', 'after'], line: 4 },
  { kind: 'rec', values: ['3', '🔐 key', 'x "q" y'], line: 7 },
  { kind: 'bad', line: 10, raw: '4,short', code: 'CSV_RECORD_INCONSISTENT_FIELDS_LENGTH' },
  { kind: 'rec', values: ['5', 'café', 'ok'], line: 11 },
  { kind: 'bad', line: 12, raw: '6,"multi\nline",ragged,🔐é', code: 'CSV_RECORD_INCONSISTENT_FIELDS_LENGTH' },
  { kind: 'rec', values: ['7', 'a,b', 'c'], line: 14 },
  { kind: 'bad', line: 15, raw: '8,x', code: 'CSV_RECORD_INCONSISTENT_FIELDS_LENGTH' },
  { kind: 'bad', line: 16, raw: '9,y,z,w', code: 'CSV_RECORD_INCONSISTENT_FIELDS_LENGTH' },
  { kind: 'rec', values: ['10', 'end', 'ok'], line: 17 },
  { kind: 'bad', line: 18, raw: '11,"never closed,\r\nstill 🔐 open', code: 'CSV_QUOTE_NOT_CLOSED' },
];

describe('RowParser', () => {
  it('the reference reader agrees with the hand-written expectation and with csv-parse/sync', () => {
    expect(reference(SAMPLE)).toEqual(SAMPLE_EXPECTED);
    const good = SAMPLE_EXPECTED.flatMap((i) => (i.kind === 'rec' ? [i.values] : []));
    expect(syncRecords(SAMPLE)).toEqual(good);
  });

  it.each(SIZES)('gives the same records, lines and bad rows whatever the chunk size (%s bytes)', async (size) => {
    const got = await parseText(SAMPLE, size);
    expect(got.items).toEqual(SAMPLE_EXPECTED);
    // Bad rows sit right before the good record that follows them in the file.
    expect(got.bad.map((b) => b.beforeRecord)).toEqual([4, 5, 6, 6, 7]);
    expect(got.bad.map((b) => b.reason)).toEqual([
      'Invalid Record Length: expect 3, got 2',
      'Invalid Record Length: expect 3, got 4',
      'Invalid Record Length: expect 3, got 2',
      'Invalid Record Length: expect 3, got 4',
      'Quote Not Closed: the parsing is finished with an opening quote',
    ]);
  });

  it('is chunking-independent on many generated bodies, against the reference reader', async () => {
    const cells = ['a', 'é', '🔐', '"q,1"', '"two\nlines"', '"crlf\r\nin"', '"x ""y"""', '', 'plain text'];
    let seed = 7;
    const rnd = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    for (let body = 0; body < 12; body++) {
      let text = body % 2 === 0 ? '\uFEFF' : '';
      for (let r = 0; r < 25; r++) {
        const width = rnd(6) === 0 ? 2 + rnd(3) : 3; // mostly 3 cells, sometimes ragged
        const row = Array.from({ length: width }, () => cells[rnd(cells.length)]!);
        if (r === 0) row.splice(0, row.length, 'h1', 'h2', 'h3');
        text += row.join(',') + (rnd(2) === 0 ? '\r\n' : '\n');
        if (rnd(5) === 0) text += rnd(2) === 0 ? '\n' : '\r\n';
      }
      const expected = reference(text);
      expect(expected.filter((i) => i.kind === 'rec').map((i) => (i as { values: string[] }).values)).toEqual(syncRecords(text));
      for (const size of [1, 3, 7, 64, Number.POSITIVE_INFINITY]) {
        expect((await parseText(text, size)).items, `body ${body}, chunk ${size}`).toEqual(expected);
      }
    }
  });

  it('skips a BOM split across chunks and keeps the first cell and line numbers intact', async () => {
    const text = '\uFEFF\n\r\nname,value\n"é",🔐\n';
    for (const size of [1, 2, 4, Number.POSITIVE_INFINITY]) {
      const got = await parseText(text, size);
      expect(got.items).toEqual([
        { kind: 'rec', values: ['name', 'value'], line: 3 },
        { kind: 'rec', values: ['é', '🔐'], line: 4 },
      ]);
    }
    // A BOM alone in its own chunks, then the body.
    const bom = Buffer.from('\uFEFF', 'utf8');
    const got = await parseChunks([bom.subarray(0, 1), bom.subarray(1, 2), bom.subarray(2), Buffer.from('a,b\n1,2\n')]);
    expect(got.items).toEqual([
      { kind: 'rec', values: ['a', 'b'], line: 1 },
      { kind: 'rec', values: ['1', '2'], line: 2 },
    ]);
  });

  it('numbers lines across mixed CRLF and LF endings', async () => {
    const text = 'a,b\r\n1,2\n3,4\r\n5,6\n7,8';
    for (const size of SIZES) {
      expect((await parseText(text, size)).items).toEqual([
        { kind: 'rec', values: ['a', 'b'], line: 1 },
        { kind: 'rec', values: ['1', '2'], line: 2 },
        { kind: 'rec', values: ['3', '4'], line: 3 },
        { kind: 'rec', values: ['5', '6'], line: 4 },
        { kind: 'rec', values: ['7', '8'], line: 5 },
      ]);
    }
  });

  it('counts line breaks inside quoted cells: the record after a 3-line cell starts 3 lines later', async () => {
    const text = 'a,b\n1,"one\r\ntwo\nthree"\r\n2,"x"\n3,"\n\n"\n4,end\n';
    for (const size of SIZES) {
      expect((await parseText(text, size)).items).toEqual([
        { kind: 'rec', values: ['a', 'b'], line: 1 },
        { kind: 'rec', values: ['1', 'one\r\ntwo\nthree'], line: 2 },
        { kind: 'rec', values: ['2', 'x'], line: 5 },
        { kind: 'rec', values: ['3', '\n\n'], line: 6 },
        { kind: 'rec', values: ['4', 'end'], line: 9 },
      ]);
    }
  });

  it('skips blank lines but counts them', async () => {
    const text = '\n\r\na,b\n\n\n1,2\r\n\r\n\n2,3\n\n';
    for (const size of SIZES) {
      expect((await parseText(text, size)).items).toEqual([
        { kind: 'rec', values: ['a', 'b'], line: 3 },
        { kind: 'rec', values: ['1', '2'], line: 6 },
        { kind: 'rec', values: ['2', '3'], line: 9 },
      ]);
    }
  });

  it('turns ragged rows into bad rows with their exact raw text, their first line and their place', async () => {
    const text = 'a,b,c\r\n1,2,3\r\n\r\nshort,row\r\n4,5,6\nway,too,"many\r\ncells",here\n\n7,8,9\nx\ny\n';
    for (const size of SIZES) {
      const got = await parseText(text, size);
      expect(got.items).toEqual([
        { kind: 'rec', values: ['a', 'b', 'c'], line: 1 },
        { kind: 'rec', values: ['1', '2', '3'], line: 2 },
        { kind: 'bad', line: 4, raw: 'short,row', code: 'CSV_RECORD_INCONSISTENT_FIELDS_LENGTH' },
        { kind: 'rec', values: ['4', '5', '6'], line: 5 },
        { kind: 'bad', line: 6, raw: 'way,too,"many\r\ncells",here', code: 'CSV_RECORD_INCONSISTENT_FIELDS_LENGTH' },
        { kind: 'rec', values: ['7', '8', '9'], line: 9 },
        { kind: 'bad', line: 10, raw: 'x', code: 'CSV_RECORD_INCONSISTENT_FIELDS_LENGTH' },
        { kind: 'bad', line: 11, raw: 'y', code: 'CSV_RECORD_INCONSISTENT_FIELDS_LENGTH' },
      ]);
      expect(got.bad.map((b) => b.beforeRecord)).toEqual([2, 3, 4, 4]);
    }
    // All in one chunk: the ragged rows of the last record only complete at end().
    const whole = await parseText(text);
    expect(whole.chunks[0]!.filter(isBadRow).map((b) => b.raw)).toEqual(['short,row', 'way,too,"many\r\ncells",here']);
    expect(whole.chunks[1]!.filter(isBadRow).map((b) => b.raw)).toEqual(['x', 'y']);
  });

  it('makes an unterminated quote at the end one bad row whose raw text runs to the end', async () => {
    const text = 'a,b\n1,2\n3,"open\r\nstill, open\n\nlast line\n';
    for (const size of SIZES) {
      const got = await parseText(text, size);
      expect(got.items).toEqual([
        { kind: 'rec', values: ['a', 'b'], line: 1 },
        { kind: 'rec', values: ['1', '2'], line: 2 },
        { kind: 'bad', line: 3, raw: '3,"open\r\nstill, open\n\nlast line', code: 'CSV_QUOTE_NOT_CLOSED' },
      ]);
      expect(got.bad[0]!.beforeRecord).toBe(2);
      expect(got.bad[0]!.reason).not.toMatch(/line \d/);
    }
    // Without a final line break, after a blank line.
    const got = await parseText('a,b\n\n"x', 1);
    expect(got.items).toEqual([
      { kind: 'rec', values: ['a', 'b'], line: 1 },
      { kind: 'bad', line: 3, raw: '"x', code: 'CSV_QUOTE_NOT_CLOSED' },
    ]);
  });

  it('decodes multi-byte UTF-8 split across chunk boundaries, in good values and in bad raw text', async () => {
    const text = 'k,v\né,🔐\n"🔐é","é\n🔐"\nbad 🔐é\n🔐,é🔐é\n';
    const buf = Buffer.from(text, 'utf8');
    const expected: Item[] = [
      { kind: 'rec', values: ['k', 'v'], line: 1 },
      { kind: 'rec', values: ['é', '🔐'], line: 2 },
      { kind: 'rec', values: ['🔐é', 'é\n🔐'], line: 3 },
      { kind: 'bad', line: 5, raw: 'bad 🔐é', code: 'CSV_RECORD_INCONSISTENT_FIELDS_LENGTH' },
      { kind: 'rec', values: ['🔐', 'é🔐é'], line: 6 },
    ];
    // Every possible cut into two chunks, so every character is split at every byte.
    for (let at = 1; at < buf.length; at++) {
      expect((await parseChunks([buf.subarray(0, at), buf.subarray(at)])).items, `cut at ${at}`).toEqual(expected);
    }
    for (const size of [1, 2, 3, 5]) expect((await parseText(buf, size)).items).toEqual(expected);
  });

  it('cuts the raw text of a huge bad row at MAX_RAW_CHARS with a trailing ellipsis', async () => {
    expect(MAX_RAW_CHARS).toBe(64 * 1024);
    const big = 'x'.repeat(MAX_RAW_CHARS + 5000);
    const exact = 'y'.repeat(MAX_RAW_CHARS);
    const wide = 'é'.repeat(140_000); // 280,000 bytes: more than 4 bytes per kept character
    const cjk = '密'.repeat(70_000); // 210,000 bytes: fewer than 4 bytes per kept character, still too many characters
    const text = `a,b\n1,2\n${big}\n${exact}\n3,4\n${wide}\n5,6\n${cjk}\n`;
    for (const size of [1000, 65_536, Number.POSITIVE_INFINITY]) {
      const got = await parseText(text, size);
      expect(got.items.filter((i) => i.kind === 'rec')).toEqual([
        { kind: 'rec', values: ['a', 'b'], line: 1 },
        { kind: 'rec', values: ['1', '2'], line: 2 },
        { kind: 'rec', values: ['3', '4'], line: 5 },
        { kind: 'rec', values: ['5', '6'], line: 7 },
      ]);
      expect(got.bad.map((b) => [b.line, b.raw.length, b.beforeRecord])).toEqual([
        [3, MAX_RAW_CHARS + 1, 2],
        [4, MAX_RAW_CHARS, 2],
        [6, MAX_RAW_CHARS + 1, 3],
        [8, MAX_RAW_CHARS + 1, 4],
      ]);
      expect(got.bad[0]!.raw).toBe(`${'x'.repeat(MAX_RAW_CHARS)}…`);
      expect(got.bad[1]!.raw).toBe(exact);
      expect(got.bad[2]!.raw).toBe(`${'é'.repeat(MAX_RAW_CHARS)}…`);
      expect(got.bad[3]!.raw).toBe(`${'密'.repeat(MAX_RAW_CHARS)}…`);
    }
  });

  it('gives zero records for an empty body, a BOM alone or blank lines only', async () => {
    for (const text of ['', '\uFEFF', '\n', '\r\n\n\r\n', '\uFEFF\r\n']) {
      for (const size of [1, 2, Number.POSITIVE_INFINITY]) {
        const got = await parseText(text, size);
        expect(got.items, JSON.stringify(text)).toEqual([]);
        for (const c of got.chunks) expect(c).toEqual([]);
      }
    }
    expect(await new RowParser().end()).toEqual([]);
  });

  it('keeps a stray carriage return that starts a row: its own line and raw text', async () => {
    // A file converted CRLF → CRCRLF twice: a blank line there is "\r\r\n", which csv-parse reads as a
    // one-cell row ("\r"), a ragged row; and a cell may start with a stray CR.
    const text = 'a,b\r\n\r\r\n1,2\r\n\rx\r\n3,4\r\n';
    for (const size of SIZES) {
      const got = await parseText(text, size);
      expect(got.items.filter((i) => i.kind === 'rec')).toEqual([
        { kind: 'rec', values: ['a', 'b'], line: 1 },
        { kind: 'rec', values: ['1', '2'], line: 3 },
        { kind: 'rec', values: ['3', '4'], line: 5 },
      ]);
      expect(got.bad.map((b) => ({ line: b.line, raw: b.raw }))).toEqual([
        { line: 2, raw: expect.any(String) },
        { line: 4, raw: '\rx' },
      ]);
    }
  });
});
