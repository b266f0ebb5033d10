/**
 * What the audit engine reports, as plain events: the wiring turns them into metrics and log
 * lines (`auditRecorder` in src/observability/instrument.ts), the engine itself touches no
 * metric. Counts arrive per batch or per commit, never per row.
 */
export type AuditEngineEvent =
  /** A run planned its range (no windows: nothing to do). */
  | { type: 'run-started'; fromMs: number; toMs: number; windows: number; cursorMs: number | null }
  | { type: 'run-finished'; summary: Record<string, unknown> }
  /** The committed state as read (run start, `audit status`): lag and checkpoint age. */
  | { type: 'state'; cursorMs: number | null; updatedAtMs: number | null; nowMs: number }
  /** Events inside their window read since the last report, and how many were already handled. */
  | { type: 'events-read'; read: number; duplicates: number }
  /** One batch acknowledged by one sink (or replayed to it). */
  | { type: 'delivered'; sink: string; delivered: number; alreadyHeld: number; deadLettered: number }
  | { type: 'parse-errors'; rows: number }
  | { type: 'schema-drift'; added: string[]; removed: string[] }
  | { type: 'id-column-missing'; column: string }
  /** One attempt at a window failed (retried or not), with the failure's stable code. */
  | { type: 'window-failed'; code: string; windowStartMs: number }
  | { type: 'window-retry'; attempt: number; delayMs: number; code: string | undefined; message: string; windowStartMs: number }
  /** A commit: the cursor, when, and the share of this run's range done (1 when it finished). */
  | { type: 'committed'; cursorMs: number; atMs: number; progress: number }
  | { type: 'sink-close-failed'; sink: string; message: string };

export type AuditObserver = (e: AuditEngineEvent) => void;

export const ignoreAuditEvents: AuditObserver = () => undefined;
