import type { AuditEvent } from '../../event.ts';
import { docJson, lineSafeJson } from '../doc-json.ts';
import { formatIndex } from './index-pattern.ts';

/**
 * The two `_bulk` lines of one event: a `create` action keyed by the event key, then the
 * document. `create` (not `index`) makes a second copy fail with 409 instead of overwriting,
 * which is how a replay is recognised as already delivered; it is also what data streams need.
 */
export function encodeBulkCreate(event: AuditEvent, indexPattern: string): Buffer {
  const action = { create: { _index: formatIndex(indexPattern, event.timestampMs), _id: event.key } };
  return Buffer.from(`${lineSafeJson(JSON.stringify(action))}\n${docJson(event)}\n`, 'utf8');
}
