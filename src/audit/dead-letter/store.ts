/**
 * Dead letters: what could not be delivered and must not be lost. Two kinds share one
 * store, keyed by "sink" name:
 * - a sink's rejections (`sink` = the sink's name, `event` set): replayable with `audit replay`;
 * - CSV rows that are not events (`sink` = `_parse`, `raw` + `line`/`row` set): kept for a human.
 * `add` resolves only once the entries are durable, so the cursor may move past them.
 */
import type { AuditEvent } from '../event.ts';

/** Pseudo-sink name of rows that could not be parsed into events. */
export const PARSE_DEAD_LETTER = '_parse';

export interface DeadLetter {
  id: string;
  sink: string;
  atMs: number;
  /** Stable code: the sink's rejection code, a csv-parse code (`CSV_RECORD_INCONSISTENT_FIELDS_LENGTH`…) or `E_BAD_TIMESTAMP`. */
  code: string;
  reason: string;
  /** How many replays already failed for this entry. */
  attempts: number;
  event?: AuditEvent;
  /** Raw CSV text of an unparsable row. */
  raw?: string;
  /** Physical line where csv-parse detected the problem (1 = header). */
  line?: number;
  /** Data row number in its export (1 = first row after the header), when known. */
  row?: number;
  /** The export window the row came from, epoch ms. */
  window?: { startMs: number; endMs: number };
}

/**
 * Handles one batch taken from the store during a replay; returns the entries that must go
 * back (still failing). Throwing stops the replay; the batch goes back untouched.
 */
export type ReplayHandler = (batch: DeadLetter[]) => Promise<DeadLetter[]>;

export interface DeadLetterStore {
  readonly describe: string;
  add(entries: readonly DeadLetter[]): Promise<void>;
  /** Entries per sink name (including `_parse`). */
  counts(): Promise<Record<string, number>>;
  /** Up to `limit` entries of a sink, oldest first, without removing them. */
  peek(sink: string, limit: number): Promise<DeadLetter[]>;
  /**
   * Feed a sink's entries to `handler` in batches. Crash-safe: entries taken by a replay that
   * died are taken again by the next replay (at-least-once).
   */
  drain(sink: string, batchSize: number, handler: ReplayHandler): Promise<{ taken: number; returned: number }>;
  close(): Promise<void>;
}
