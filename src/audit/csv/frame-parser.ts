/**
 * csv-parse over an export body, fed chunk by chunk, turning each chunk into one `Frame`:
 * the records it completed, packed into one string with their field boundaries, the
 * physical line each record starts on, and the rows that could not be parsed (with their
 * raw text and line, placed between the good records they stood between).
 *
 * Parser settings:
 * - BOM, CRLF/LF, quoted commas, newlines and doubled quotes: csv-parse.
 * - A ragged row (wrong number of cells) or an unterminated quote is not fatal: it becomes a
 *   bad row and parsing goes on with the next one (`skip_records_with_error`).
 * - A stray quote inside an unquoted cell is kept literally (`relax_quotes`), so one sloppy
 *   cell cannot swallow the rows after it. Blank lines are not rows.
 *
 * Line numbers and raw text come from byte offsets (csv-parse's `info.bytes` when a record
 * ends), counted over the chunks still held, instead of csv-parse's `raw` option, which
 * copies every byte of the export a second time. Only the chunks of records not yet
 * complete are held.
 */
import { Parser, type CsvError } from 'csv-parse';
import { planColumns, uniqueColumnNames } from '../columns.ts';
import { canonicalNames, canonicalRowOf, hashRow, sortedColumnOrder } from '../event-key.ts';

export const HASH_CHARS = 64;
const NO_HASH = '-'.repeat(HASH_CHARS);

export interface FrameParserOptions {
  /** The configured id column, if any: rows are hashed only when the header has no id column. */
  idColumn?: string | undefined;
}

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

/** A bad row and the index of the good record (in its frame) it came before. */
export interface FramedBadRow extends BadRow {
  before: number;
}

/**
 * The records one chunk completed. Record `r` has the fields `text.slice(ends[j - 1] ?? 0,
 * ends[j])` for `j` in `[firsts[r], firsts[r + 1])`, and starts on physical line `lines[r]`.
 * Plain data (strings and typed arrays), so it crosses a worker boundary as one copy.
 */
export interface Frame {
  records: number;
  /**
   * With keys to hash (no id column), the SHA-256 (hex) of each record's canonical row,
   * HASH_CHARS per record (the header's place is filled with `-`); else empty.
   */
  hashes: string;
  text: string;
  ends: Uint32Array;
  /** records + 1 entries: the index in `ends` of each record's first field, then the total. */
  firsts: Uint32Array;
  lines: Float64Array;
  bad: FramedBadRow[];
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

export class FrameParser {
  private readonly parser: CollectingParser;
  private held: Held[] = [];
  /** Bytes received so far. */
  private received = 0;
  /** Offset where the next record's bytes begin, and the physical line at that offset. */
  private pos = 0;
  private posLine = 1;
  private fields: string[] = [];
  private ends: number[] = [];
  private firsts: number[] = [];
  private lines: number[] = [];
  private bad: FramedBadRow[] = [];
  private hashes: string[] = [];
  private header = true;
  private readonly idColumn: string | undefined;
  /** Set from the header when keys are hashes: the canonical row's fixed parts. */
  private hasher: { names: string[]; sorted: number[] } | undefined;
  private textLength = 0;
  private failure: Error | undefined;
  private ended = false;

  constructor(opts: FrameParserOptions = {}) {
    this.idColumn = opts.idColumn;
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

  /** Parses one chunk of the body; returns the records it completed. */
  write(chunk: Buffer): Frame {
    if (chunk.length > 0) {
      this.held.push({ buf: chunk, at: this.received });
      this.received += chunk.length;
      // Synchronous: nothing is ever queued on the readable side, so the transform runs now.
      this.parser.write(chunk);
    }
    return this.take();
  }

  /** The end of the body: the last record (or the unterminated one) comes out now. */
  async end(): Promise<Frame> {
    await new Promise<void>((resolve) => {
      if (this.ended || this.failure) return resolve();
      this.parser.once('end', resolve);
      this.parser.once('error', () => resolve());
      this.parser.end();
    });
    return this.take();
  }

  private take(): Frame {
    if (this.failure) throw this.failure;
    const records = this.lines.length;
    this.firsts.push(this.ends.length);
    const frame: Frame = {
      records,
      hashes: this.hashes.join(''),
      text: this.fields.join(''),
      ends: Uint32Array.from(this.ends),
      firsts: Uint32Array.from(this.firsts),
      lines: Float64Array.from(this.lines),
      bad: this.bad,
    };
    this.fields = [];
    this.ends = [];
    this.firsts = [];
    this.lines = [];
    this.bad = [];
    this.hashes = [];
    this.textLength = 0;
    this.release();
    return frame;
  }

  private onRecord(fields: string[]): void {
    this.lines.push(this.advance(this.parser.info.bytes).line);
    if (this.header) {
      this.header = false;
      const columns = uniqueColumnNames(fields);
      if (planColumns(columns, { id: this.idColumn }).id < 0) {
        const sorted = sortedColumnOrder(columns);
        this.hasher = { names: canonicalNames(columns, sorted), sorted };
      }
      if (this.hasher) this.hashes.push(NO_HASH);
    } else if (this.hasher) {
      this.hashes.push(hashRow(canonicalRowOf(this.hasher.names, fields, this.hasher.sorted)));
    }
    this.firsts.push(this.ends.length);
    for (const f of fields) {
      this.fields.push(f);
      this.textLength += f.length;
      this.ends.push(this.textLength);
    }
  }

  private onSkip(err: CsvError | undefined): undefined {
    // An unterminated quote is reported at the end, before csv-parse moves its byte count.
    const end = err?.code === 'CSV_QUOTE_NOT_CLOSED' ? this.received : this.parser.info.bytes;
    const { line, start } = this.advance(end);
    this.bad.push({
      line,
      raw: this.rawText(start, end),
      code: err?.code ?? 'CSV_ERROR',
      // csv-parse's own line count differs from ours (it counts a quoted CRLF twice): keep one number.
      reason: (err?.message ?? 'unparsable CSV row').replace(/ (?:on|at) line \d+/, ''),
      before: this.lines.length,
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
    for (const span of this.spans(from, to)) for (let i = span.indexOf(LF); i !== -1; i = span.indexOf(LF, i + 1)) n++;
    return n;
  }

  /** A bad row's text as it stood in the export, without its line break, cut at MAX_RAW_CHARS. */
  private rawText(from: number, to: number): string {
    const limit = Math.min(to, from + MAX_RAW_BYTES);
    const text = Buffer.concat([...this.spans(from, limit)]).toString('utf8').replace(/\r?\n$/, '');
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
