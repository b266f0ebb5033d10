import type { AuditEvent } from '../../event.ts';
import { docJson } from '../doc-json.ts';

/** One event's document; the request body is these joined as a JSON array or as NDJSON. */
export function encodeDoc(event: AuditEvent): Buffer {
  return Buffer.from(docJson(event), 'utf8');
}

export function encodeBody(payloads: Buffer[], format: 'json' | 'ndjson'): Buffer {
  if (format === 'ndjson') {
    const parts: Buffer[] = [];
    for (const p of payloads) parts.push(p, NEWLINE);
    return Buffer.concat(parts);
  }
  const parts: Buffer[] = [OPEN];
  payloads.forEach((p, i) => {
    if (i > 0) parts.push(COMMA);
    parts.push(p);
  });
  parts.push(CLOSE);
  return Buffer.concat(parts);
}

const NEWLINE = Buffer.from('\n');
const OPEN = Buffer.from('[');
const COMMA = Buffer.from(',');
const CLOSE = Buffer.from(']');

export const CONTENT_TYPES = { json: 'application/json', ndjson: 'application/x-ndjson' } as const;
