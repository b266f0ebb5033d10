/**
 * Encodes events as file lines straight into one reusable buffer, a chunk at a time, with
 * each line's size in bytes (for the sink's limits and rotation): no line string and no
 * second pass to measure it. The bytes are those of encodeFileLine(); the document is
 * written as it is and its opening `{` overwritten with the `,` that follows `_ts`.
 */
import { EncodedEvent, type AuditEvent } from '../../event.ts';
import type { BatchDefaults } from '../common-config.ts';
import type { RejectedEvent } from '../sink.ts';
import { encodeFileLine } from './encoder.ts';
import { grownBuffer } from '../../grown-buffer.ts';
import { docJson, lineSafeJson } from '../doc-json.ts';

export interface FileChunk {
  events: AuditEvent[];
  /** Lines of `events`, back to back (a view of the shared buffer, valid until the next chunk). */
  bytes: Buffer;
  /** Size of each line in bytes, same order as `events`. */
  sizes: number[];
  rejected: RejectedEvent[];
}

const COMMA = 44;
const NEWLINE = 10;
/** Buffer size to start with, bytes (grows to fit a chunk, and stays). */
const INITIAL_BYTES = 1 << 20;

export class LineBuffer {
  private buf: Buffer = Buffer.allocUnsafe(INITIAL_BYTES);

  /**
   * The events as chunks of at most `maxEvents` lines and `maxBytes` bytes (a single larger
   * line travels alone). Lazy: a chunk's bytes are overwritten when the next one is asked for.
   */
  *chunks(events: readonly AuditEvent[], limits: BatchDefaults): Generator<FileChunk> {
    let cur: FileChunk = { events: [], bytes: this.buf, sizes: [], rejected: [] };
    let used = 0;
    for (const event of events) {
      let size: number;
      try {
        size = this.encode(event, used);
      } catch (e) {
        cur.rejected.push({ event, code: 'encode_failed', reason: `event could not be encoded: ${(e as Error).message}` });
        continue;
      }
      const n = cur.events.length;
      if (n >= limits.maxEvents || (n > 0 && used + size > limits.maxBytes)) {
        yield { ...cur, bytes: this.buf.subarray(0, used) };
        // The line just written starts the next chunk.
        this.buf.copyWithin(0, used, used + size);
        cur = { events: [], bytes: this.buf, sizes: [], rejected: [] };
        used = 0;
      }
      cur.events.push(event);
      cur.sizes.push(size);
      used += size;
    }
    if (cur.events.length > 0 || cur.rejected.length > 0) yield { ...cur, bytes: this.buf.subarray(0, used) };
  }

  /** Writes the event's line at `at`; returns its size. */
  private encode(event: AuditEvent, at: number): number {
    if (!Number.isFinite(event.timestampMs)) throw new Error('event has no valid timestamp');
    const encoded = event instanceof EncodedEvent ? event : undefined;
    const json = encoded ? undefined : docJson(event);
    const most = encoded ? encoded.jsonBytes : 3 * (json?.length ?? 0);
    if (!event.noReservedMembers || most < 2) return this.put(encodeFileLine(event), at);
    const head = `{"_key":${lineSafeJson(JSON.stringify(event.key))},"_ts":${Math.trunc(event.timestampMs)}`;
    this.reserve(at, 3 * head.length + most + 1);
    const buf = this.buf;
    let end = at + buf.write(head, at, 'utf8');
    const open = end;
    end += encoded ? encoded.copyJson(buf, end) : buf.write(json ?? '', end, 'utf8');
    if (end - open === 2) {
      buf[open] = 125; // `{}`: the line is the head closed
      end = open + 1;
    } else {
      buf[open] = COMMA;
    }
    buf[end] = NEWLINE;
    return end + 1 - at;
  }

  private put(line: string, at: number): number {
    this.reserve(at, 3 * line.length);
    return this.buf.write(line, at, 'utf8');
  }

  /** Room for `bytes` more after `at`, keeping what is before it. */
  private reserve(at: number, bytes: number): void {
    if (at + bytes > this.buf.length) this.buf = grownBuffer(this.buf, at + bytes, at);
  }
}
