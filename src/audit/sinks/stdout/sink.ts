/**
 * NDJSON to stdout (or an injected stream). Backpressured: a write that fills the stream's
 * buffer waits for `drain`, and the batch is acknowledged only after the stream's write
 * callback (the bytes were handed to the OS). Not idempotent: a replay prints again.
 */
import { once } from 'node:events';
import type { AuditEvent } from '../../event.ts';
import { ErrorCodes, SyncError, errorCodeOf } from '../../../errors.ts';
import type { SinkContext } from '../context.ts';
import { SinkInstrument } from '../instrument.ts';
import { chunkEvents } from '../batcher.ts';
import { writeLocally } from '../local-write.ts';
import type { Sink, WriteResult } from '../sink.ts';
import type { StdoutSinkConfig } from './config.ts';
import { encodeNdjsonLine } from './encoder.ts';

export class StdoutSink implements Sink {
  readonly name: string;
  readonly type = 'stdout';
  readonly idempotent = false;
  private readonly config: StdoutSinkConfig;
  private readonly stream: NodeJS.WritableStream;
  private readonly instrument: SinkInstrument;
  private closed = false;

  constructor(config: StdoutSinkConfig, ctx: SinkContext) {
    this.name = config.name;
    this.config = config;
    this.stream = ctx.stdout ?? process.stdout;
    this.instrument = new SinkInstrument(config.name, this.type, ctx);
  }

  async open(): Promise<void> {}

  async write(events: AuditEvent[], signal?: AbortSignal): Promise<WriteResult> {
    if (this.closed) throw new SyncError(ErrorCodes.CONFIG_INVALID, 'fatal', `sink ${this.name}: write after close`);
    return writeLocally(
      chunkEvents(events, encodeNdjsonLine, this.config.batch),
      {
        instrument: this.instrument,
        write: (chunk) => writeAndWait(this.stream, Buffer.concat(chunk.payloads, chunk.bytes)),
        failure: (e) => `sink ${this.name}: stdout write failed (${errorCodeOf(e) ?? 'error'})`,
      },
      signal,
    );
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}

/** Resolves once the chunk is flushed (write callback) and, if the buffer was full, drained. */
export async function writeAndWait(stream: NodeJS.WritableStream, buf: Buffer): Promise<void> {
  let ok = true;
  const flushed = new Promise<void>((resolve, reject) => {
    ok = stream.write(buf, (err?: Error | null) => (err ? reject(err) : resolve()));
  });
  const drained = ok ? undefined : once(stream, 'drain');
  // A failed write also fails the callback; keep the drain promise from surfacing it twice.
  drained?.catch(() => undefined);
  await flushed;
  if (drained) await drained;
}
