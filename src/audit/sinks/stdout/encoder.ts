import type { AuditEvent } from '../../event.ts';

/** One NDJSON line: the event's document, nothing added. */
export function encodeNdjsonLine(event: AuditEvent): Buffer {
  return Buffer.from(`${event.json}\n`, 'utf8');
}
