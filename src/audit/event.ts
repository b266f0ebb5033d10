/** One audit-log event as it travels from the CSV export to the sinks. */
export interface AuditEvent {
  /** Stable key: the id column when present/configured, else SHA-256 of the canonical row. */
  key: string;
  /** Event time, epoch milliseconds (UTC). */
  timestampMs: number;
  /** The original CSV columns, header → value. */
  fields: Record<string, string>;
  /** The JSON document sinks emit: original columns plus normalized fields (`@timestamp`, `event.id`, …). */
  doc: Record<string, unknown>;
}
