/**
 * Splits an engine batch into requests bounded by `maxEvents` and `maxBytes` (encoded,
 * uncompressed). Lazy, so only one request's bytes are held at a time. An event that
 * cannot be encoded is rejected with `encode_failed`, never dropped; an event larger
 * than `maxBytes` on its own still travels alone (the destination decides).
 */
import type { AuditEvent } from '../event.ts';
import type { BatchDefaults } from './common-config.ts';
import type { RejectedEvent } from './sink.ts';

export interface Chunk<P extends string | Buffer = Buffer> {
  events: AuditEvent[];
  /** One encoded payload per event, same order as `events` (text is sent as UTF-8). */
  payloads: P[];
  /** Encoded size of each payload in bytes, same order. */
  sizes: number[];
  bytes: number;
  /** Events of this stretch that could not be encoded. */
  rejected: RejectedEvent[];
}

export function* chunkEvents<P extends string | Buffer>(
  events: readonly AuditEvent[],
  encode: (e: AuditEvent) => P,
  limits: BatchDefaults,
): Generator<Chunk<P>> {
  let cur: Chunk<P> = { events: [], payloads: [], sizes: [], bytes: 0, rejected: [] };
  for (const event of events) {
    let payload: P;
    try {
      payload = encode(event);
    } catch (e) {
      cur.rejected.push({ event, code: 'encode_failed', reason: `event could not be encoded: ${(e as Error).message}` });
      continue;
    }
    const size = typeof payload === 'string' ? Buffer.byteLength(payload, 'utf8') : payload.length;
    const full = cur.events.length >= limits.maxEvents || (cur.events.length > 0 && cur.bytes + size > limits.maxBytes);
    if (full) {
      yield cur;
      cur = { events: [], payloads: [], sizes: [], bytes: 0, rejected: [] };
    }
    cur.events.push(event);
    cur.payloads.push(payload);
    cur.sizes.push(size);
    cur.bytes += size;
  }
  if (cur.events.length > 0 || cur.rejected.length > 0) yield cur;
}
