/**
 * Splits an engine batch into requests bounded by `maxEvents` and `maxBytes` (encoded,
 * uncompressed). Lazy, so only one request's bytes are held at a time. An event that
 * cannot be encoded is rejected with `encode_failed`, never dropped; an event larger
 * than `maxBytes` on its own still travels alone (the destination decides).
 */
import type { AuditEvent } from '../event.ts';
import type { BatchDefaults } from './common-config.ts';
import type { RejectedEvent } from './sink.ts';

export interface Chunk {
  events: AuditEvent[];
  /** One encoded payload per event, same order as `events`. */
  payloads: Buffer[];
  bytes: number;
  /** Events of this stretch that could not be encoded. */
  rejected: RejectedEvent[];
}

export function* chunkEvents(
  events: readonly AuditEvent[],
  encode: (e: AuditEvent) => Buffer,
  limits: BatchDefaults,
): Generator<Chunk> {
  let cur: Chunk = { events: [], payloads: [], bytes: 0, rejected: [] };
  for (const event of events) {
    let payload: Buffer;
    try {
      payload = encode(event);
    } catch (e) {
      cur.rejected.push({ event, code: 'encode_failed', reason: `event could not be encoded: ${(e as Error).message}` });
      continue;
    }
    const full = cur.events.length >= limits.maxEvents || (cur.events.length > 0 && cur.bytes + payload.length > limits.maxBytes);
    if (full) {
      yield cur;
      cur = { events: [], payloads: [], bytes: 0, rejected: [] };
    }
    cur.events.push(event);
    cur.payloads.push(payload);
    cur.bytes += payload.length;
  }
  if (cur.events.length > 0 || cur.rejected.length > 0) yield cur;
}
