/**
 * One audit-log event as it travels from the CSV export to the sinks. The document is kept
 * as JSON text, encoded once when the row is read and sent as is by every sink (with several
 * sinks, one encoding instead of one per sink; in a batch, one string per event instead of an
 * object tree).
 */
export interface AuditEvent {
  /** Stable key: the id column when present/configured, else SHA-256 of the canonical row. */
  key: string;
  /** Event time, epoch milliseconds (UTC). */
  timestampMs: number;
  /**
   * The JSON document sinks emit (an object): original columns plus normalized fields
   * (`@timestamp`, `event.id`, …), in the configured field style.
   */
  json: string;
  /**
   * Set by the event builder: the document has no top-level `_key`/`_ts` member (the file
   * sink then need not look for them). Absent on documents from elsewhere (replay, tests).
   */
  noReservedMembers?: true;
}

/** An event from a document object. */
export function eventFromDoc(key: string, timestampMs: number, doc: Record<string, unknown>): AuditEvent {
  return { key, timestampMs, json: JSON.stringify(doc) };
}

/** The document as an object, for what picks fields from it (syslog headers, CEF, tests). */
export function eventDoc(event: AuditEvent): Record<string, unknown> {
  return JSON.parse(event.json) as Record<string, unknown>;
}
