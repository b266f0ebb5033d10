/**
 * The JSON text a sink writes for an event's document: line-safe (see line-safe-json.ts),
 * whoever built the event. The event builder's documents already are, so they pass as is;
 * events from elsewhere (replayed dead letters written by an older version, tests) are
 * checked here.
 */
import { EncodedEvent, type AuditEvent } from '../event.ts';
import { lineSafeJson } from '../line-safe-json.ts';

export function docJson(event: AuditEvent): string {
  return event instanceof EncodedEvent ? event.json : lineSafeJson(event.json);
}

export { lineSafeJson };
