import { eventDoc, type AuditEvent } from '../../event.ts';
import { docJson, lineSafeJson } from '../doc-json.ts';

/**
 * One NDJSON line: `{"_key":…,"_ts":…, …doc}`. The two leading fields have a fixed name
 * whatever the document's field style, so resume (`recentKeys`) reads them without knowing
 * the mapping; `_ts` is the event time in epoch milliseconds. The engine's documents never
 * carry top-level `_key`/`_ts` (the plain style renames such columns `_key_raw`/`_ts_raw`);
 * a document from elsewhere that does has them dropped rather than duplicated (only
 * documents without the builder's `noReservedMembers` mark are looked at).
 */
export function encodeFileLine(event: AuditEvent): string {
  if (!Number.isFinite(event.timestampMs)) throw new Error('event has no valid timestamp');
  let body = docJson(event);
  if (!event.noReservedMembers && (body.includes('"_key"') || body.includes('"_ts"'))) {
    const { _key: _k, _ts: _t, ...rest } = eventDoc(event);
    body = lineSafeJson(JSON.stringify(rest));
  }
  const head = `{"_key":${lineSafeJson(JSON.stringify(event.key))},"_ts":${Math.trunc(event.timestampMs)}`;
  return `${head}${body === '{}' ? '}' : `,${body.slice(1)}`}\n`;
}

/** The resume fields of a line, or undefined for a line that is not ours. */
export function decodeFileLine(line: string): { key: string; ts: number } | undefined {
  try {
    const o = JSON.parse(line) as { _key?: unknown; _ts?: unknown };
    return typeof o._key === 'string' && typeof o._ts === 'number' ? { key: o._key, ts: o._ts } : undefined;
  } catch {
    return undefined;
  }
}
