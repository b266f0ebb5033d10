/**
 * Export body → header, rows and bad rows, in file order, through csv-parse on a parse
 * thread (frame-parser.ts says what is parsed how). Backpressure end to end: the body is
 * read only while fewer than MAX_AHEAD chunks are parsed but not yet handled, and a handler
 * that returns a promise holds the reading until it resolves, so a slow sink pauses the
 * socket.
 *
 * A network failure mid-body surfaces as a transient SyncError (the window is retried); the
 * handler's own errors pass through unchanged.
 */
import type { Readable } from 'node:stream';
import type { Worker } from 'node:worker_threads';
import { ErrorCodes, SyncError, errorCodeOf, isSyncError } from '../../platform/errors.ts';
import type { BadRow, Frame } from './frame-parser.ts';
import type { FromParser, ToParser } from './messages.ts';
import { acquireParseThread, discardParseThread, releaseParseThread } from './parse-threads.ts';

export type { BadRow } from './frame-parser.ts';

/** Chunks handed to the parse thread whose records are not handled yet. */
const MAX_AHEAD = 8;
const TIMEOUT_CODES = new Set(['UND_ERR_BODY_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'ETIMEDOUT']);

export function streamError(e: unknown): SyncError {
  if (isSyncError(e)) return e;
  const c = errorCodeOf(e) ?? 'unknown';
  return new SyncError(TIMEOUT_CODES.has(c) ? ErrorCodes.TIMEOUT : ErrorCodes.TRANSIENT, 'transient', `audit-log export stream interrupted (${c})`, { cause: e });
}

/** What the reader calls, in file order. A returned promise pauses the reader (backpressure). */
export interface CsvHandler {
  header(cells: string[]): void;
  row(values: string[], line: number): void | Promise<void>;
  bad(row: BadRow): void | Promise<void>;
}

/** One body on one parse thread: a pump sending chunks, frames queued for the handler. */
class Session {
  private readonly thread: Worker;
  private readonly frames: Array<{ frame: Frame; done: boolean }> = [];
  private failure: SyncError | undefined;
  private waiters: Array<() => void> = [];
  private ahead = 0;
  private stopped = false;
  private header = true;

  constructor(thread: Worker) {
    this.thread = thread;
    thread.on('message', (m: FromParser) => {
      if (m.t === 'frame') this.frames.push(m);
      else this.fail(new SyncError(ErrorCodes.TRANSIENT, 'transient', `audit-log export could not be parsed (${m.code}: ${m.message})`));
      this.notify();
    });
    thread.on('error', (e: Error) => this.fail(streamError(Object.assign(new Error(e.message), { code: errorCodeOf(e) ?? 'ERR_PARSE_THREAD' }))));
    thread.on('exit', () => this.fail(streamError(Object.assign(new Error('parse thread exited'), { code: 'ERR_PARSE_THREAD_EXIT' }))));
  }

  async run(body: Readable, handler: CsvHandler): Promise<void> {
    this.send({ t: 'start' });
    const pump = this.pump(body);
    try {
      for (;;) {
        const next = await this.nextFrame();
        await this.deliver(next.frame, handler);
        this.ahead--;
        this.notify();
        if (next.done) break;
      }
    } finally {
      this.stopped = true;
      this.notify();
      // The pump may be waiting for the body to send more: stop it now (a clean end has
      // already read the whole body, so this only matters on a failure).
      if (!body.destroyed) body.destroy();
      await pump;
    }
  }

  private async pump(body: Readable): Promise<void> {
    try {
      for await (const chunk of body) {
        if (this.stopped) break;
        const c = chunk as Buffer;
        const bytes = new ArrayBuffer(c.length);
        new Uint8Array(bytes).set(c);
        this.ahead++;
        this.send({ t: 'chunk', bytes }, [bytes]);
        while (this.ahead >= MAX_AHEAD && !this.stopped) await this.waitChange();
      }
      if (!this.stopped) {
        this.ahead++;
        this.send({ t: 'end' });
      }
    } catch (e) {
      this.fail(streamError(e));
    } finally {
      if (!body.destroyed) body.destroy();
    }
  }

  private async nextFrame(): Promise<{ frame: Frame; done: boolean }> {
    for (;;) {
      if (this.failure) throw this.failure;
      const f = this.frames.shift();
      if (f) return f;
      await this.waitChange();
    }
  }

  /** Bad rows and records of one frame, in file order. */
  private async deliver(frame: Frame, handler: CsvHandler): Promise<void> {
    const { text, ends, firsts, lines, bad } = frame;
    let b = 0;
    for (let r = 0; r < frame.records; r++) {
      while (b < bad.length && (bad[b] as { before: number }).before <= r) {
        const p = handler.bad(badRow(bad[b++] as BadRow));
        if (p) await p;
      }
      const first = firsts[r] as number;
      const last = firsts[r + 1] as number;
      const values = new Array<string>(last - first);
      for (let j = first, from = first === 0 ? 0 : (ends[first - 1] as number); j < last; j++) {
        const to = ends[j] as number;
        values[j - first] = text.slice(from, to);
        from = to;
      }
      if (this.header) {
        this.header = false;
        handler.header(values);
        continue;
      }
      const p = handler.row(values, lines[r] as number);
      if (p) await p;
    }
    while (b < bad.length) {
      const p = handler.bad(badRow(bad[b++] as BadRow));
      if (p) await p;
    }
  }

  private send(m: ToParser, transfer?: ArrayBuffer[]): void {
    this.thread.postMessage(m, transfer);
  }

  private fail(e: SyncError): void {
    this.failure ??= e;
    this.notify();
  }

  /** Resolves at the next message, handled frame, failure or stop (the pump and the reader both wait). */
  private waitChange(): Promise<void> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  private notify(): void {
    const ws = this.waiters;
    this.waiters = [];
    for (const w of ws) w();
  }

  /** Clean end: the done frame was handled and nothing of this body is in flight. */
  get clean(): boolean {
    return this.failure === undefined && this.ahead === 0 && this.frames.length === 0;
  }
}

function badRow(b: BadRow): BadRow {
  return { line: b.line, raw: b.raw, code: b.code, reason: b.reason };
}

/**
 * Reads the whole body, calling the handler per record. Stream failures become transient
 * SyncErrors; the handler's own errors pass through unchanged.
 */
export async function readCsv(body: Readable, handler: CsvHandler): Promise<void> {
  const thread = acquireParseThread();
  const session = new Session(thread);
  let clean = false;
  try {
    await session.run(body, handler);
    clean = session.clean;
  } finally {
    if (clean) releaseParseThread(thread);
    else discardParseThread(thread);
  }
}
