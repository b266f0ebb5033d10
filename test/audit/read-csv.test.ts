/** The CSV reader on its own: item kinds, physical line numbers and raw text of bad rows. */
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { readCsv, type BadRow } from '../../src/audit/csv/read-csv.ts';

type CsvItem = { kind: 'header'; cells: string[] } | { kind: 'row'; values: string[]; line: number } | ({ kind: 'bad' } & BadRow);

async function collect(body: Readable, out: CsvItem[] = []): Promise<CsvItem[]> {
  await readCsv(body, {
    header: (cells) => void out.push({ kind: 'header', cells }),
    row: (values, line) => void out.push({ kind: 'row', values, line }),
    // An async handler: the reader must wait for it.
    bad: async (b) => {
      await new Promise((r) => setTimeout(r, 1));
      out.push({ kind: 'bad', ...b });
    },
  });
  return out;
}

async function items(text: string, chunk = 7): Promise<CsvItem[]> {
  const buf = Buffer.from(text, 'utf8');
  const parts: Buffer[] = [];
  for (let i = 0; i < buf.length; i += chunk) parts.push(buf.subarray(i, i + chunk));
  return collect(Readable.from(parts));
}

describe('readCsv', () => {
  it('numbers rows by physical line across CRLF multi-line cells and blank lines, in small chunks', async () => {
    // Mixed line endings too: CRLF, then blank LF lines.
    const text = '\uFEFFa,b,c\r\n1,"two\r\nlines",3\r\n\r\n4,5\r\n6,7,8\r\n\n\n9,"x ""q"" y",10\r\n';
    const got = await items(text);
    expect(got[0]).toEqual({ kind: 'header', cells: ['a', 'b', 'c'] });
    const rows = got.filter((i) => i.kind === 'row');
    expect(rows).toEqual([
      { kind: 'row', values: ['1', 'two\r\nlines', '3'], line: 2 },
      { kind: 'row', values: ['6', '7', '8'], line: 6 },
      { kind: 'row', values: ['9', 'x "q" y', '10'], line: 9 },
    ]);
    const bad = got.filter((i) => i.kind === 'bad');
    expect(got.map((i) => i.kind)).toEqual(['header', 'row', 'bad', 'row', 'row']);
    expect(bad).toEqual([
      { kind: 'bad', line: 5, raw: '4,5', code: 'CSV_RECORD_INCONSISTENT_FIELDS_LENGTH', reason: 'Invalid Record Length: expect 3, got 2' },
    ]);
  });

  it('keeps a stray quote inside an unquoted cell literally instead of swallowing the next rows', async () => {
    const got = await items('a,b\n1,ab"c\n2,d\n');
    expect(got.filter((i) => i.kind === 'row').map((i) => (i as { values: string[] }).values)).toEqual([
      ['1', 'ab"c'],
      ['2', 'd'],
    ]);
  });

  it('turns a body that breaks off into a transient E_EXPORT_TRUNCATED', async () => {
    const body = new Readable({ read() {} });
    body.push('a,b\n1,2\n3,4\n5,6\n');
    setTimeout(() => body.destroy(Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' })), 10);
    const seen: CsvItem[] = [];
    await expect(collect(body, seen)).rejects.toMatchObject({
      code: 'E_EXPORT_TRUNCATED',
      kind: 'transient',
      message: expect.stringContaining('UND_ERR_SOCKET'),
    });
    expect(seen[0]).toEqual({ kind: 'header', cells: ['a', 'b'] });
    expect(seen.length).toBeGreaterThanOrEqual(2);
  });

  it('stops pulling the body while the handler holds a row, then reads it all once released', async () => {
    const rows = 1000;
    const line = (i: number): string => `${String(i).padStart(6, '0')},${'x'.repeat(56)}\n`; // 64 bytes
    let pulled = 0;
    async function* source(): AsyncGenerator<Buffer> {
      yield Buffer.from('id,data\n');
      for (let i = 0; i < rows; i++) {
        pulled++;
        yield Buffer.from(line(i));
      }
    }
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let firstRow!: () => void;
    const firstRowSeen = new Promise<void>((r) => (firstRow = r));
    const got: string[] = [];
    const done = readCsv(Readable.from(source()), {
      header: () => undefined,
      row: (values) => {
        got.push(values[0] as string);
        if (got.length === 1) {
          firstRow();
          return gate;
        }
        return undefined;
      },
      bad: () => undefined,
    });
    await firstRowSeen;
    let whileBlocked = -1;
    for (let waited = 0; waited < 3000 && pulled !== whileBlocked; waited += 100) {
      whileBlocked = pulled;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(pulled).toBe(whileBlocked); // it stopped
    // Bounded by the stream's own small buffer, not the body.
    expect(whileBlocked).toBeLessThan(40);
    expect(got).toHaveLength(1);
    release();
    await done;
    expect(pulled).toBe(rows);
    expect(got).toEqual(Array.from({ length: rows }, (_, i) => String(i).padStart(6, '0')));
  });

  it('rejects with the handler’s own error (sync or async) without waiting for a stalled body, and ends it', async () => {
    for (const fail of ['sync', 'async'] as const) {
      const stalled = new Readable({ read() {} });
      stalled.push('a,b\n1,2\n3,4\n'); // then nothing more, and no end
      const boom = new Error(`sink broke (${fail})`);
      const result = readCsv(stalled, {
        header: () => undefined,
        row: () => {
          if (fail === 'sync') throw boom;
          return Promise.reject(boom);
        },
        bad: () => undefined,
      }).then(
        () => 'resolved',
        (e: unknown) => e,
      );
      const timeout = new Promise((r) => setTimeout(() => r('still waiting after 1 s'), 1000));
      const outcome = await Promise.race([result, timeout]);
      stalled.destroy();
      await result;
      expect(outcome).toBe(boom);
      expect(stalled.destroyed).toBe(true);
    }
  });
});
