/**
 * Export body → header, rows and bad rows, through csv-parse with backpressure: records are
 * pulled from the parser, so a slow sink pauses the parser, which pauses the socket.
 *
 * - BOM, CRLF/LF/CR, quoted commas, newlines and doubled quotes: handled by csv-parse.
 * - A ragged row (wrong number of cells) or an unterminated quote is not fatal: it comes out
 *   as a `bad` item with its raw text and line, and parsing goes on with the next row.
 * - A stray quote inside an unquoted cell is kept literally (`relax_quotes`), so one sloppy
 *   cell cannot swallow the rows after it.
 * - Blank lines are not rows.
 * - A network failure mid-body surfaces as a transient SyncError (the window is retried).
 */
import { pipeline, type Readable } from 'node:stream';
import { Parser, type CsvError, type Options } from 'csv-parse';
import { ErrorCodes, SyncError, errorCodeOf, isSyncError } from '../platform/errors.ts';

/** Dead-letter entries keep at most this much of a bad row's raw text, characters. */
const MAX_RAW_CHARS = 64 * 1024;
const TIMEOUT_CODES = new Set(['UND_ERR_BODY_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'ETIMEDOUT']);

/** csv-parse's raw text keeps the line breaks of skipped blank lines before a record: drop them. */
function stripLeadingBreaks(raw: string): string {
  const c = raw.charCodeAt(0);
  return c === 10 || c === 13 ? raw.replace(/^[\r\n]+/, '') : raw;
}

function trimRaw(raw: string | undefined): string {
  const text = stripLeadingBreaks(raw ?? '').replace(/\r?\n?$/, '').replace(/\r$/, '');
  return text.length > MAX_RAW_CHARS ? `${text.slice(0, MAX_RAW_CHARS)}…` : text;
}

export function streamError(e: unknown): SyncError {
  if (isSyncError(e)) return e;
  const c = errorCodeOf(e) ?? 'unknown';
  return new SyncError(TIMEOUT_CODES.has(c) ? ErrorCodes.TIMEOUT : ErrorCodes.TRANSIENT, 'transient', `audit-log export stream interrupted (${c})`, { cause: e });
}

/**
 * Line breaks inside a record's raw text: not the blank lines before it (counted by the
 * parser) nor its own terminator. Scans in place, no copy of the text per row.
 */
function innerNewlines(raw: string): number {
  let start = 0;
  while (start < raw.length && (raw.charCodeAt(start) === 10 || raw.charCodeAt(start) === 13)) start++;
  const end = raw.charCodeAt(raw.length - 1) === 10 ? raw.length - 1 : raw.length;
  let n = 0;
  for (let i = raw.indexOf('\n', start); i !== -1 && i < end; i = raw.indexOf('\n', i + 1)) n++;
  return n;
}

/**
 * Numbers records by the physical line they start on. csv-parse's own `info.lines` counts a
 * CRLF inside a quoted cell twice and is read too late once records are buffered, so the
 * count is kept here, in parse order: good records pass through push(), bad ones through
 * on_skip, skipped blank lines show up in `info.empty_lines`.
 */
class NumberedParser extends Parser {
  private nextLine = 1;
  private blanksSeen = 0;

  constructor(opts: Options) {
    super(opts);
  }

  /** Line of the record whose raw text is `raw`, advancing past it. */
  lineOf(raw: string | undefined): number {
    const blanks = this.info.empty_lines;
    this.nextLine += blanks - this.blanksSeen;
    this.blanksSeen = blanks;
    const line = this.nextLine;
    this.nextLine += 1 + innerNewlines(raw ?? '');
    return line;
  }

  override push(chunk: unknown, encoding?: BufferEncoding): boolean {
    if (chunk !== null && typeof chunk === 'object') {
      const rec = chunk as { raw: string; line?: number };
      rec.line = this.lineOf(rec.raw);
    }
    return super.push(chunk, encoding);
  }
}

export interface BadRow {
  line: number;
  raw: string;
  code: string;
  reason: string;
}

/** What the reader calls, in file order. A returned promise pauses the reader (backpressure). */
export interface CsvHandler {
  header(cells: string[]): void;
  row(values: string[], line: number): void | Promise<void>;
  bad(row: BadRow): void | Promise<void>;
}

function parserOptions(bad: BadRow[], lineOf: (raw: string | undefined) => number): Options {
  return {
    bom: true,
    raw: true,
    relax_quotes: true,
    skip_empty_lines: true,
    // Both, explicitly: auto-detection locks onto the first one seen and mixed files break.
    record_delimiter: ['\r\n', '\n'],
    skip_records_with_error: true,
    on_skip: (err: CsvError | undefined, raw: string | undefined) => {
      bad.push({
        line: lineOf(raw),
        raw: trimRaw(raw),
        code: err?.code ?? 'CSV_ERROR',
        // csv-parse's own line count differs from ours (see NumberedParser): keep one number.
        reason: (err?.message ?? 'unparsable CSV row').replace(/ (?:on|at) line \d+/, ''),
      });
      return undefined;
    },
  };
}

/** Resolves when the stream has something to read, has ended, or was destroyed. */
function readable(s: Readable): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      s.off('readable', done);
      s.off('end', done);
      s.off('close', done);
      resolve();
    };
    s.on('readable', done);
    s.on('end', done);
    s.on('close', done);
  });
}

/**
 * Reads the whole body, calling the handler per record. Records are drained synchronously
 * from the parser's buffer (no promise per row); the loop only awaits when the buffer is
 * empty or when the handler returns a promise. Stream failures become transient SyncErrors;
 * the handler's own errors pass through unchanged.
 */
export async function readCsv(body: Readable, handler: CsvHandler): Promise<void> {
  const bad: BadRow[] = [];
  const parser: NumberedParser = new NumberedParser(parserOptions(bad, (raw) => parser.lineOf(raw)));
  let failure: Error | undefined;
  let finished = false;
  // pipeline() forwards a body error into the parser and reports it here.
  pipeline(body, parser, (err) => {
    if (err) failure = err;
    finished = true;
  });
  let header = true;
  try {
    for (;;) {
      let rec: { record: string[]; line: number } | null;
      while ((rec = parser.read() as typeof rec) !== null) {
        // Bad rows come out in file order relative to good ones (on_skip runs ahead of the reader).
        while (bad.length > 0 && (bad[0] as BadRow).line < rec.line) {
          const p = handler.bad(bad.shift() as BadRow);
          if (p) await p;
        }
        if (header) {
          header = false;
          handler.header(rec.record);
          continue;
        }
        const p = handler.row(rec.record, rec.line);
        if (p) await p;
      }
      if (failure) throw streamError(failure);
      if (parser.readableEnded) break;
      if (parser.destroyed) {
        // Destroyed without an error and before its end: give pipeline() a tick to report why.
        await new Promise((r) => setImmediate(r));
        if (failure) throw streamError(failure);
        if (!finished || !parser.readableEnded) throw streamError(Object.assign(new Error('export stream closed early'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }));
        break;
      }
      await readable(parser);
    }
    while (bad.length > 0) {
      const p = handler.bad(bad.shift() as BadRow);
      if (p) await p;
    }
  } finally {
    if (!body.destroyed) body.destroy();
    if (!parser.destroyed) parser.destroy();
  }
}
