/**
 * Export body → header, rows and bad rows, in file order (row-parser.ts says what is
 * parsed how), on the calling thread, one chunk at a time.
 *
 * Backpressure end to end: a handler that returns a promise holds the reading until it
 * resolves, and the next chunk is pulled from the body only once every item of the last one
 * was handled, so a slow sink pauses the socket. A network failure mid-body or a body
 * csv-parse refuses surfaces as a transient SyncError (the window is retried); the handler's
 * own errors pass through unchanged.
 */
import type { Readable } from 'node:stream';
import { errorCodeOf } from '../../errors.ts';
import { RowParser, isBadRow, type BadRow, type CsvItem } from './row-parser.ts';
import { parseFailure, streamError } from './stream-errors.ts';

export { streamError } from './stream-errors.ts';
export type { BadRow } from './row-parser.ts';

/** What the reader calls, in file order. A returned promise pauses the reader (backpressure). */
export interface CsvHandler {
  header(cells: string[]): void;
  /** `line`: the physical line the record starts on (1 = the header). */
  row(values: string[], line: number): void | Promise<void>;
  bad(row: BadRow): void | Promise<void>;
}

/**
 * Reads the whole body, calling the handler per item. Body and parser failures become
 * transient SyncErrors; the handler's own errors pass through unchanged.
 */
export async function readCsv(body: Readable, handler: CsvHandler): Promise<void> {
  const parser = new RowParser();
  const chunks = body[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  let header = true;
  try {
    for (;;) {
      let next: IteratorResult<Buffer>;
      try {
        next = await chunks.next();
      } catch (e) {
        throw streamError(e);
      }
      let items: CsvItem[];
      try {
        items = next.done ? await parser.end() : parser.write(next.value);
      } catch (e) {
        throw parseFailure(errorCodeOf(e) ?? 'CSV_ERROR', e instanceof Error ? e.message : String(e));
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
      if (next.done) return;
    }
  } finally {
    if (!body.destroyed) body.destroy();
  }
}
