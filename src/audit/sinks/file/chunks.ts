/**
 * An engine batch as the file sink's chunks: at most `maxEvents` lines and `maxBytes` bytes
 * each (a single larger line travels alone), each line's size in bytes kept for rotation.
 * An event that cannot be encoded is rejected (dead-lettered), the others go on.
 */
import type { AuditEvent } from '../../event.ts';
import type { BatchDefaults } from '../common-config.ts';
import type { RejectedEvent } from '../sink.ts';
import { encodeFileLine } from './encoder.ts';

export interface FileChunk {
  events: AuditEvent[];
  /** The lines of `events` as UTF-8, back to back. */
  bytes: Buffer;
  /** Size of each line in bytes, same order as `events`. */
  sizes: number[];
  rejected: RejectedEvent[];
}

export function* fileChunks(events: readonly AuditEvent[], limits: BatchDefaults): Generator<FileChunk> {
  let lines: string[] = [];
  let cur: Omit<FileChunk, 'bytes'> = { events: [], sizes: [], rejected: [] };
  let used = 0;
  const done = (): FileChunk => ({ ...cur, bytes: Buffer.from(lines.join(''), 'utf8') });
  for (const event of events) {
    let line: string;
    try {
      line = encodeFileLine(event);
    } catch (e) {
      cur.rejected.push({ event, code: 'encode_failed', reason: `event could not be encoded: ${(e as Error).message}` });
      continue;
    }
    const size = Buffer.byteLength(line, 'utf8');
    const n = cur.events.length;
    if (n >= limits.maxEvents || (n > 0 && used + size > limits.maxBytes)) {
      yield done();
      lines = [];
      cur = { events: [], sizes: [], rejected: [] };
      used = 0;
    }
    lines.push(line);
    cur.events.push(event);
    cur.sizes.push(size);
    used += size;
  }
  if (cur.events.length > 0 || cur.rejected.length > 0) yield done();
}
