/**
 * One export body on one parse thread: a pump hands the body's chunks to the thread (at
 * most MAX_AHEAD not yet handled), frames come back in order and go to the handler.
 */
import type { Readable } from 'node:stream';
import type { Worker } from 'node:worker_threads';
import { errorCodeOf, type SyncError } from '../../platform/errors.ts';
import { FrameDelivery } from './frame-delivery.ts';
import type { Frame } from './frame-parser.ts';
import type { FromParser, ToParser } from './messages.ts';
import type { CsvHandler, ReadCsvOptions } from './read-csv.ts';
import { parseFailure, streamError } from './stream-errors.ts';

/** Chunks handed to the parse thread whose records are not handled yet. */
const MAX_AHEAD = 8;

/** One body on one parse thread: a pump sending chunks, frames queued for the handler. */
export class ThreadSession {
  private readonly thread: Worker;
  private readonly frames: Array<{ frame: Frame; done: boolean }> = [];
  private failure: SyncError | undefined;
  private waiters: Array<() => void> = [];
  private ahead = 0;
  private stopped = false;
  private readonly delivery = new FrameDelivery();

  constructor(thread: Worker) {
    this.thread = thread;
    thread.on('message', (m: FromParser) => {
      if (m.t === 'frame') this.frames.push(m);
      else this.fail(parseFailure(m.code, m.message));
      this.notify();
    });
    thread.on('error', (e: Error) => this.fail(streamError(Object.assign(new Error(e.message), { code: errorCodeOf(e) ?? 'ERR_PARSE_THREAD' }))));
    thread.on('exit', () => this.fail(streamError(Object.assign(new Error('parse thread exited'), { code: 'ERR_PARSE_THREAD_EXIT' }))));
  }

  async run(body: Readable, handler: CsvHandler, opts: ReadCsvOptions): Promise<void> {
    this.send({ t: 'start', idColumn: opts.idColumn });
    const pump = this.pump(body);
    try {
      for (;;) {
        const next = await this.nextFrame();
        await this.delivery.deliver(next.frame, handler);
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

