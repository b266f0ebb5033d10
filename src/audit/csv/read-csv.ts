/**
 * Export body → header, rows and bad rows, in file order, through csv-parse
 * (frame-parser.ts says what is parsed how). By default csv-parse runs on a parse thread,
 * so that parsing a chunk overlaps with building, deduplicating and delivering the events
 * of the one before (thread-session.ts); in low-memory mode it runs inline, one chunk at a
 * time, without a second JavaScript heap.
 *
 * Backpressure end to end: a handler that returns a promise holds the reading until it
 * resolves, and the body is read only while few chunks wait to be handled, so a slow sink
 * pauses the socket. A network failure mid-body surfaces as a transient SyncError (the
 * window is retried); the handler's own errors pass through unchanged.
 */
import type { Readable } from 'node:stream';
import { errorCodeOf } from '../../platform/errors.ts';
import { FrameDelivery } from './frame-delivery.ts';
import { FrameParser, type BadRow, type Frame } from './frame-parser.ts';
import { acquireParseThread, discardParseThread, releaseParseThread } from './parse-threads.ts';
import { parseFailure, streamError } from './stream-errors.ts';
import { ThreadSession } from './thread-session.ts';

export { streamError } from './stream-errors.ts';

export type { BadRow } from './frame-parser.ts';

/** What the reader calls, in file order. A returned promise pauses the reader (backpressure). */
export interface CsvHandler {
  header(cells: string[]): void;
  /** `hash`: SHA-256 (hex) of the row's canonical form, when keys are hashes (see ReadCsvOptions). */
  row(values: string[], line: number, hash: string | undefined): void | Promise<void>;
  bad(row: BadRow): void | Promise<void>;
}

export interface ReadCsvOptions {
  /**
   * The configured id column. Without one in the header, each row's canonical form is
   * hashed where it is parsed (see event-key.ts), on the parse thread by default.
   */
  idColumn?: string | undefined;
  /** Parse on this thread (low-memory mode). Default: SCIM_AUDIT_SYNC_LOW_MEMORY=1, which `--low-memory` sets. */
  inline?: boolean;
}

/** Where csv-parse runs for these options. */
export function parseMode(opts: Pick<ReadCsvOptions, 'inline'> = {}): 'thread' | 'inline' {
  return (opts.inline ?? process.env['SCIM_AUDIT_SYNC_LOW_MEMORY'] === '1') ? 'inline' : 'thread';
}

/**
 * Reads the whole body, calling the handler per record. Stream failures become transient
 * SyncErrors; the handler's own errors pass through unchanged.
 */
export async function readCsv(body: Readable, handler: CsvHandler, opts: ReadCsvOptions = {}): Promise<void> {
  if (parseMode(opts) === 'inline') return readInline(body, handler, opts);
  const thread = acquireParseThread();
  const session = new ThreadSession(thread);
  let clean = false;
  try {
    await session.run(body, handler, opts);
    clean = session.clean;
  } finally {
    if (clean) releaseParseThread(thread);
    else discardParseThread(thread);
  }
}

async function readInline(body: Readable, handler: CsvHandler, opts: ReadCsvOptions): Promise<void> {
  const parser = new FrameParser({ idColumn: opts.idColumn });
  const delivery = new FrameDelivery();
  const chunks = body[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  try {
    // Body, parser and handler failures are told apart: only the first two are classified here.
    for (;;) {
      let next: IteratorResult<Buffer>;
      try {
        next = await chunks.next();
      } catch (e) {
        throw streamError(e);
      }
      let frame: Frame;
      try {
        frame = next.done ? await parser.end() : parser.write(next.value);
      } catch (e) {
        throw parseFailure(errorCodeOf(e) ?? 'CSV_ERROR', e instanceof Error ? e.message : String(e));
      }
      await delivery.deliver(frame, handler);
      if (next.done) return;
    }
  } finally {
    if (!body.destroyed) body.destroy();
  }
}
