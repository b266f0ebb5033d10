/**
 * Export body → header, rows and bad rows, in file order (row-parser.ts says what is
 * parsed how), on the calling thread, one chunk at a time.
 *
 * Backpressure end to end: a handler that returns a promise holds the reading until it
 * resolves, and the next chunk is pulled from the body only once every item of the last one
 * was handled, so a slow sink pauses the socket.
 *
 * The body is checked for being a complete CSV export as it is read (the contract:
 * src/platform/audit-export-contract.ts): it must start like CSV (not HTML, not JSON), hold
 * a header row, end with a complete record, stay within its byte and record-size limits and
 * its time budget. Each failure is a transient SyncError with its own code (the window is
 * retried); the handler's own errors pass through unchanged.
 */
import type { Readable } from 'node:stream';
import { errorCodeOf } from '../../errors.ts';
import { sniffBody } from '../../platform/audit-export-contract.ts';
import type { ReadBudget } from './read-budget.ts';
import { RowParser, isBadRow, type BadRow, type CsvItem } from './row-parser.ts';
import { bodyTooLarge, noHeader, notCsvBody, parseFailure, recordTooLarge, streamError, truncatedAtEnd } from './stream-errors.ts';

export { streamError } from './stream-errors.ts';
export type { BadRow } from './row-parser.ts';

/** What the reader calls, in file order. A returned promise pauses the reader (backpressure). */
export interface CsvHandler {
  header(cells: string[]): void;
  /** `line`: the physical line the record starts on (1 = the header). */
  row(values: string[], line: number): void | Promise<void>;
  bad(row: BadRow): void | Promise<void>;
}

export interface ReadLimits {
  /** A record (its bytes up to its line break) larger than this fails the read, bytes. */
  maxRecordBytes?: number;
  /** A body larger than this fails the read, bytes. */
  maxBytes?: number;
  /** Time the body may take to arrive (waits for chunks only). */
  budget?: ReadBudget;
}

const LF = 0x0a;
const ignore = (): undefined => undefined;

/**
 * Reads the whole body, calling the handler per item. Body and parser failures become
 * transient SyncErrors; the handler's own errors pass through unchanged.
 */
export async function readCsv(body: Readable, handler: CsvHandler, limits: ReadLimits = {}): Promise<void> {
  const parser = new RowParser();
  const chunks = body[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const maxRecordBytes = limits.maxRecordBytes ?? Number.POSITIVE_INFINITY;
  const maxBytes = limits.maxBytes ?? Number.POSITIVE_INFINITY;
  let header = true;
  let received = 0;
  let lastByte = -1;
  let sniffed = false;
  try {
    for (;;) {
      let next: IteratorResult<Buffer>;
      try {
        next = limits.budget
          ? await limits.budget.charge(
              () => chunks.next(),
              (e) => body.destroy(e),
            )
          : await chunks.next();
      } catch (e) {
        throw streamError(e);
      }
      if (!next.done && next.value.length > 0) {
        const chunk = next.value;
        if (!sniffed) {
          const kind = sniffBody(chunk, received === 0);
          if (kind === 'html' || kind === 'json') throw notCsvBody(kind);
          sniffed = kind === 'csv';
        }
        received += chunk.length;
        lastByte = chunk[chunk.length - 1] as number;
        if (received > maxBytes) throw bodyTooLarge(maxBytes);
      }
      let items: CsvItem[];
      try {
        items = next.done ? await parser.end() : parser.write(next.value);
      } catch (e) {
        throw parseFailure(errorCodeOf(e) ?? 'CSV_ERROR', e instanceof Error ? e.message : String(e));
      }
      if (parser.openRecordBytes > maxRecordBytes) throw recordTooLarge(maxRecordBytes, parser.openRecordLine);
      if (next.done) {
        // A last record without its line break that does not parse was cut off in transit.
        const last = items[items.length - 1];
        if (last !== undefined && isBadRow(last) && lastByte !== LF) throw truncatedAtEnd(last.line, last.reason);
      }
      for (const item of items) {
        if (header && !isBadRow(item)) {
          header = false;
          handler.header(item.values);
          continue;
        }
        // The handlers return a promise only when they must wait (backpressure): no await per row otherwise.
        const p = isBadRow(item) ? handler.bad(item) : handler.row(item.values, item.line);
        if (p) await p;
      }
      if (next.done) {
        if (header) throw noHeader(received === 0);
        return;
      }
    }
  } finally {
    if (!body.destroyed) {
      // Nobody reads what is left: the abort error the destroy emits is not a failure.
      body.on('error', ignore);
      body.destroy();
    }
  }
}
