/**
 * One audit-log event as it travels from the CSV export to the sinks. The document is kept
 * as JSON text, encoded once when the row is read and sent as is by every sink (with several
 * sinks, one encoding instead of one per sink; in a batch, one string per event instead of an
 * object tree). Events read from an export hold that text as UTF-8 bytes (EncodedEvent).
 */
import { lineSafeJson } from './line-safe-json.ts';

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

/**
 * An event whose document is UTF-8 bytes in a buffer shared with the events built after it
 * (EventBuilder's arena), outside the JavaScript heap. A batch is built and then held while
 * the sinks write it; as strings, those documents outlived two young-generation collections
 * and were promoted, and the old generation's collections of them were the export's largest
 * CPU cost after parsing (bench:audit, docs/audit.md#performance). `json` decodes on demand
 * (sinks that send text); the file sink copies the bytes.
 */
export class EncodedEvent implements AuditEvent {
  readonly key: string;
  readonly timestampMs: number;
  private readonly buf: Buffer;
  private readonly start: number;
  private readonly end: number;

  constructor(key: string, timestampMs: number, buf: Buffer, start: number, end: number) {
    this.key = key;
    this.timestampMs = timestampMs;
    this.buf = buf;
    this.start = start;
    this.end = end;
  }

  /** Built from a row: no top-level `_key`/`_ts` member. */
  get noReservedMembers(): true {
    return true;
  }

  get json(): string {
    return this.buf.toString('utf8', this.start, this.end);
  }

  /** Size of the document in bytes. */
  get jsonBytes(): number {
    return this.end - this.start;
  }

  /** Copies the document's bytes into `target` at `at`; returns how many. */
  copyJson(target: Buffer, at: number): number {
    return this.buf.copy(target, at, this.start, this.end);
  }

  /** As stored (dead letters): the plain event. */
  toJSON(): AuditEvent {
    return { key: this.key, timestampMs: this.timestampMs, json: this.json, noReservedMembers: true };
  }
}

/** An event from a document object. */
export function eventFromDoc(key: string, timestampMs: number, doc: Record<string, unknown>): AuditEvent {
  return { key, timestampMs, json: lineSafeJson(JSON.stringify(doc)) };
}

/** The document as an object, for what picks fields from it (syslog headers, CEF, tests). */
export function eventDoc(event: AuditEvent): Record<string, unknown> {
  return JSON.parse(event.json) as Record<string, unknown>;
}
