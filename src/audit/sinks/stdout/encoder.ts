import type { AuditEvent } from '../../event.ts';
import { docJson } from '../doc-json.ts';

/** One NDJSON line: the event's document, nothing added. */
export function encodeNdjsonLine(event: AuditEvent): Buffer {
  return Buffer.from(`${docJson(event)}\n`, 'utf8');
}
