/**
 * CSV shapes the export may take, served by a hand-written HTTP server: quoting, BOM/CRLF,
 * ragged and unparsable rows (dead-lettered with raw text and line, never fatal), timestamp
 * formats and zones, and dead letters that are not repeated by the next overlapping run.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { PARSE_DEAD_LETTER } from '../../src/audit/dead-letter/store.ts';
import { T0, createHarness, type Harness, type HarnessOptions } from './support/harness.ts';
import { startCsvServer, type CsvServer } from './support/csv-server.ts';

let h: Harness | undefined;
let csv: CsvServer | undefined;
afterEach(async () => {
  await h?.close();
  await csv?.close();
  h = undefined;
  csv = undefined;
});

const at = (min: number): string => new Date(T0 + min * 60_000).toISOString();

async function serve(body: string | Buffer, audit: HarnessOptions['audit'] = {}): Promise<Harness> {
  csv = await startCsvServer(() => ({ body }));
  h = await createHarness({ nowMs: T0 + 3_600_000, platformUrl: csv.url, audit });
  return h;
}

describe('CSV parsing', () => {
  it('reads BOM, CRLF, quoted commas, doubled quotes and embedded newlines, columns by header', async () => {
    const body =
      '\uFEFFUser Email,Details,Timestamp,Event ID,Event Name\r\n' +
      `a@example.com,"{""k"":""v, w""}",${at(1)},e1,Logged in\r\n` +
      `b@example.com,"line one\r\nline two",${at(2)},e2,"Updated, user"\r\n`;
    await serve(Buffer.from(body, 'utf8'));
    const s = await h!.run();
    expect(s.parseErrors).toBe(0);
    const lines = await h!.sinkLines();
    expect(lines.map((l) => l['_key'])).toEqual(['e1', 'e2']);
    const audit = (l: Record<string, unknown>): Record<string, string> => (l['platform'] as { audit: Record<string, string> }).audit;
    expect(audit(lines[0]!)).toEqual({
      'User Email': 'a@example.com',
      Details: '{"k":"v, w"}',
      Timestamp: at(1),
      'Event ID': 'e1',
      'Event Name': 'Logged in',
    });
    expect(audit(lines[1]!)['Details']).toBe('line one\r\nline two');
    expect((lines[1]!['event'] as { action: string }).action).toBe('Updated, user');
  });

  it('dead-letters ragged, unparsable and timestamp-less rows with raw text and line, and keeps going', async () => {
    const body = [
      'Timestamp,Event ID,Event Name',
      `${at(1)},"e1",ok`,
      `${at(2)},e2`, // ragged: one cell short
      `${at(3)},e3,ok`,
      `${at(4)},e4,ok,extra`, // ragged: one cell too many
      `not-a-time,e5,ok`, // no readable timestamp
      `${at(6)},e6,ok`,
      `${at(7)},"e7,never closed`, // unterminated quote at the end of the body
      '',
    ].join('\n');
    await serve(body);
    const s = await h!.run();
    expect((await h!.sinkKeys()).sort()).toEqual(['e1', 'e3', 'e6']);
    expect(s.parseErrors).toBe(4);
    expect(s.deadLettered[PARSE_DEAD_LETTER]).toBe(4);
    const letters = await h!.deadLetters.peek(PARSE_DEAD_LETTER, 10);
    expect(letters).toHaveLength(4);
    const byRaw = new Map(letters.map((l) => [l.raw, l]));
    expect(byRaw.get(`${at(2)},e2`)).toMatchObject({ code: 'CSV_RECORD_INCONSISTENT_FIELDS_LENGTH', line: 3 });
    expect(byRaw.get(`${at(4)},e4,ok,extra`)).toMatchObject({ code: 'CSV_RECORD_INCONSISTENT_FIELDS_LENGTH', line: 5 });
    expect(byRaw.get('not-a-time,e5,ok')).toMatchObject({ code: 'E_BAD_TIMESTAMP', line: 6 });
    expect(letters.find((l) => l.code === 'CSV_QUOTE_NOT_CLOSED')?.raw).toContain('e7,never closed');
    expect((await h!.state.load()).cursorMs).toBe(T0 + 3_600_000);

    // The next run re-reads the overlap: the same bad rows are not dead-lettered again.
    h!.nowMs += 5 * 60_000;
    const again = await h!.run({ from: new Date(T0) });
    expect(again.parseErrors).toBe(0);
    expect((await h!.deadLetters.counts())[PARSE_DEAD_LETTER]).toBe(4);
    expect((await h!.sinkKeys()).sort()).toEqual(['e1', 'e3', 'e6']);
  });

  it('reads timestamps without an offset in the configured zone, and other common formats', async () => {
    const body = [
      'created_at,id,action',
      '2026-11-01 01:10:00,a,x', // Europe/Paris (UTC+1 in November) → 00:10Z
      '2026-11-01T00:20:00+00:00,b,x',
      `${Math.floor((T0 + 30 * 60_000) / 1000)},c,x`, // epoch seconds
      `${T0 + 40 * 60_000},d,x`, // epoch ms
      '"Sun, 01 Nov 2026 00:50:00 GMT",e,x',
      '',
    ].join('\n');
    await serve(body, { timestamp: { timezone: 'Europe/Paris' } });
    await h!.run();
    const lines = await h!.sinkLines();
    expect(Object.fromEntries(lines.map((l) => [l['_key'], l['_ts']]))).toEqual({
      a: T0 + 10 * 60_000,
      b: T0 + 20 * 60_000,
      c: T0 + 30 * 60_000,
      d: T0 + 40 * 60_000,
      e: T0 + 50 * 60_000,
    });
  });

  it('uses the configured timestamp and id columns over the detected ones', async () => {
    const body = ['Timestamp,Logged At,Event ID,Ref', `${at(90)},${at(5)},same,r1`, `${at(90)},${at(6)},same,r2`, ''].join('\n');
    await serve(body, { timestamp: { column: 'Logged At' }, columns: { id: 'Ref' } });
    await h!.run();
    expect((await h!.sinkKeys()).sort()).toEqual(['r1', 'r2']);
  });

  it('collapses a row repeated in one export, but keeps identical rows that are distinct events', async () => {
    const row = `${at(7)},Logged in,a@example.com`;
    // No id column: two identical rows in the same instant are two events (#2 suffix)…
    await serve(['Timestamp,Event Name,User Email', row, row, `${at(8)},Logged out,a@example.com`, ''].join('\n'));
    await h!.run();
    const keys = await h!.sinkKeys();
    expect(keys).toHaveLength(3);
    expect(keys.filter((k) => k.endsWith('#2'))).toHaveLength(1);
    // …and a re-export of the same rows gives the same keys: the idempotent file sink holds
    // them once; the plain sink, which cannot tell, receives the re-export's three again.
    await h!.run({ from: new Date(T0) });
    expect(await h!.sinkKeys()).toHaveLength(3);
    const plain = await h!.plainKeys();
    expect(plain).toHaveLength(6);
    expect(new Set(plain)).toEqual(new Set(keys));
  });
});
