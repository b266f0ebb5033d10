/**
 * The write loop of the sinks that write locally (file, stdout): the engine batch as the
 * sink's chunks, each chunk written and timed, the outcome reported once through the
 * instrument, and a failed write classified as transient with the sink's own wording.
 */
import type { AuditEvent } from '../event.ts';
import { ErrorCodes, SyncError } from '../../errors.ts';
import type { SinkInstrument } from './instrument.ts';
import type { RejectedEvent, WriteResult } from './sink.ts';

/** What the loop needs of a chunk: its events, and those that could not be encoded. */
export interface LocalChunk {
  events: AuditEvent[];
  rejected: RejectedEvent[];
}

export interface LocalWrite<C extends LocalChunk> {
  instrument: SinkInstrument;
  write: (chunk: C) => Promise<void>;
  /** The message of a failed write (no secrets: built from the sink's name, path and the OS code). */
  failure: (e: unknown) => string;
}

/** Chunks are pulled one at a time, after the previous one is written (they may share a buffer). */
export async function writeLocally<C extends LocalChunk>(
  chunks: Iterable<C>,
  w: LocalWrite<C>,
  signal?: AbortSignal,
): Promise<WriteResult> {
  let delivered = 0;
  const rejected: RejectedEvent[] = [];
  for (const chunk of chunks) {
    signal?.throwIfAborted();
    rejected.push(...chunk.rejected);
    if (chunk.events.length === 0) continue;
    const started = performance.now();
    try {
      await w.write(chunk);
    } catch (e) {
      w.instrument.request('error', (performance.now() - started) / 1000, chunk.events.length);
      const err = new SyncError(ErrorCodes.TRANSIENT, 'transient', w.failure(e), { cause: e });
      w.instrument.error(err.code, err.message);
      throw err;
    }
    w.instrument.request('ok', (performance.now() - started) / 1000, chunk.events.length);
    delivered += chunk.events.length;
  }
  w.instrument.delivered(delivered);
  w.instrument.rejected(rejected);
  return { delivered, rejected };
}
