/**
 * csv-parse over an export body, fed chunk by chunk: each chunk gives the items it
 * completed, in file order — records (their cells and the physical line they start on) and
 * the rows that could not be parsed (their raw text, line and csv-parse's code).
 *
 * Parser settings:
 * - BOM, CRLF/LF, quoted commas, newlines and doubled quotes: csv-parse.
 * - A ragged row (wrong number of cells) or an unterminated quote is not fatal: it becomes a
 *   bad row and parsing goes on with the next one (`skip_records_with_error`).
 * - A stray quote inside an unquoted cell is kept literally (`relax_quotes`), so one sloppy
 *   cell cannot swallow the rows after it. Blank lines are not rows.
 *
 * Line numbers and raw text come from byte offsets (csv-parse's `info.bytes` when a record
 * ends), counted over the chunks still held: csv-parse's own line count counts a quoted CRLF
 * twice, and its `raw` option would copy every byte of the export a second time. Only the
 * chunks of records not yet complete are held.
 */
import { Parser, type CsvError } from 'csv-parse';

/** Dead-letter entries keep at most this much of a bad row's raw text, characters. */
export const MAX_RAW_CHARS = 64 * 1024;
/** Bytes of a bad row decoded for its raw text (UTF-8: at most 4 per character). */
const MAX_RAW_BYTES = MAX_RAW_CHARS * 4;
const LF = 10;
const CR = 13;

export interface BadRow {
  line: number;
  raw: string;
  code: string;
  reason: string;
}

/** A record: its cells and the physical line it starts on (1 = the header). */
export interface CsvRecord {
  values: string[];
  line: number;
}

/** What one chunk completed, in file order: records, and bad rows (told apart by `raw`). */
export type CsvItem = CsvRecord | BadRow;

export function isBadRow(item: CsvItem): item is BadRow {
  return (item as BadRow).raw !== undefined;
}

interface Held {
  buf: Buffer;
  /** Offset of buf[0] from the start of the body. */
  at: number;
}

/** csv-parse's stream, with each completed record collected instead of queued. */
class CollectingParser extends Parser {
  onRecord: (fields: string[]) => void = () => undefined;

  override push(chunk: unknown, encoding?: BufferEncoding): boolean {
    if (chunk === null) return super.push(null, encoding);
    this.onRecord(chunk as string[]);
    return true;
  }
}

function isHighSurrogate(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
}

export class RowParser {
  private readonly parser: CollectingParser;
  private held: Held[] = [];
  /** Bytes received so far. */
  private received = 0;
  /** Offset where the next record's bytes begin, and the physical line at that offset. */
  private pos = 0;
  private posLine = 1;
  private items: CsvItem[] = [];
  private failure: Error | undefined;
  private ended = false;

  constructor() {
    this.parser = new CollectingParser({
      bom: true,
      relax_quotes: true,
      skip_empty_lines: true,
      // Both, explicitly: auto-detection locks onto the first one seen and mixed files break.
      record_delimiter: ['\r\n', '\n'],
      skip_records_with_error: true,
      on_skip: (err: CsvError | undefined) => this.onSkip(err),
    });
    this.parser.onRecord = (fields) => this.onRecord(fields);
    this.parser.on('error', (e: Error) => (this.failure ??= e));
    this.parser.on('end', () => (this.ended = true));
    this.parser.resume();
  }

  /** Bytes received past the end of the last complete record: the record being read. */
  get openRecordBytes(): number {
    return this.received - this.pos;
  }

  /** The physical line the record being read starts on (near enough: before its leading blank lines). */
  get openRecordLine(): number {
    return this.posLine;
  }

  /** Parses one chunk of the body; returns the items it completed. */
  write(chunk: Buffer): CsvItem[] {
    if (chunk.length > 0) {
      this.held.push({ buf: chunk, at: this.received });
      this.received += chunk.length;
      // Synchronous: nothing is ever queued on the readable side, so the transform runs now.
      this.parser.write(chunk);
    }
    return this.take();
  }

  /** The end of the body: the last record (or the unterminated one) comes out now. */
  async end(): Promise<CsvItem[]> {
    await new Promise<void>((resolve) => {
      if (this.ended || this.failure) return resolve();
      this.parser.once('end', resolve);
      this.parser.once('error', () => resolve());
      this.parser.end();
    });
    return this.take();
  }

  private take(): CsvItem[] {
    if (this.failure) throw this.failure;
    const items = this.items;
    this.items = [];
    this.release();
    return items;
  }

  private onRecord(values: string[]): void {
    this.items.push({ values, line: this.advance(this.parser.info.bytes).line });
  }

  private onSkip(err: CsvError | undefined): undefined {
    // An unterminated quote is reported at the end, before csv-parse moves its byte count.
    const end = err?.code === 'CSV_QUOTE_NOT_CLOSED' ? this.received : this.parser.info.bytes;
    const { line, start } = this.advance(end);
    this.items.push({
      line,
      raw: this.rawText(start, end),
      code: err?.code ?? 'CSV_ERROR',
      // csv-parse's own line count differs from ours (it counts a quoted CRLF twice): keep one number.
      reason: (err?.message ?? 'unparsable CSV row').replace(/ (?:on|at) line \d+/, ''),
    });
    return undefined;
  }

  /**
   * Moves past the record ending at `end`: skips the blank lines and the BOM before it,
   * counts the line breaks inside it. Returns where its text starts and on which line.
   */
  private advance(end: number): { line: number; start: number } {
    let start = this.pos;
    let line = this.posLine;
    if (start === 0 && this.byteAt(0) === 0xef && this.byteAt(1) === 0xbb && this.byteAt(2) === 0xbf) start = 3;
    // Blank lines are whole record delimiters (LF or CRLF); a lone CR belongs to the record.
    while (start < end) {
      const b = this.byteAt(start);
      const skip = b === LF ? 1 : b === CR && this.byteAt(start + 1) === LF ? 2 : 0;
      if (skip === 0) break;
      start += skip;
      line++;
    }
    this.pos = end;
    this.posLine = line + this.countLf(start, end);
    return { line, start };
  }

  private byteAt(offset: number): number {
    for (const h of this.held) if (offset >= h.at && offset < h.at + h.buf.length) return h.buf[offset - h.at] as number;
    return -1;
  }

  /** The held bytes in [from, to), chunk by chunk. */
  private *spans(from: number, to: number): Generator<Buffer> {
    for (const h of this.held) {
      const hEnd = h.at + h.buf.length;
      if (hEnd <= from || h.at >= to) continue;
      yield h.buf.subarray(Math.max(from, h.at) - h.at, Math.min(to, hEnd) - h.at);
    }
  }

  /** Line feeds in [from, to). */
  private countLf(from: number, to: number): number {
    let n = 0;
    for (const h of this.held) {
      const hEnd = h.at + h.buf.length;
      if (hEnd <= from || h.at >= to) continue;
      const end = Math.min(to, hEnd) - h.at;
      for (let i = h.buf.indexOf(LF, Math.max(from, h.at) - h.at); i !== -1 && i < end; i = h.buf.indexOf(LF, i + 1)) n++;
    }
    return n;
  }

  /** A bad row's text as it stood in the export, without its line break, cut at MAX_RAW_CHARS. */
  private rawText(from: number, to: number): string {
    const limit = Math.min(to, from + MAX_RAW_BYTES);
    const text = Buffer.concat([...this.spans(from, limit)])
      .toString('utf8')
      .replace(/\r?\n$/, '');
    if (text.length <= MAX_RAW_CHARS && limit >= to) return text;
    // Cut at a character boundary: never half of a surrogate pair.
    const cut = MAX_RAW_CHARS - (isHighSurrogate(text.charCodeAt(MAX_RAW_CHARS - 1)) ? 1 : 0);
    return `${text.slice(0, cut)}…`;
  }

  /** Drops the chunks wholly before the next record's first byte. */
  private release(): void {
    let drop = 0;
    while (drop < this.held.length && (this.held[drop] as Held).at + (this.held[drop] as Held).buf.length <= this.pos) drop++;
    // Keep the first chunk while the BOM may still be looked at.
    if (drop > 0 && this.pos > 3) this.held = this.held.slice(drop);
  }
}
