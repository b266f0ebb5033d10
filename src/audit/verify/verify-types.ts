/** What `audit verify` reports (printed as text, or as JSON with `--json`). */

export interface SinkDifference {
  sink: string;
  /** Events of the export the sink's files do not hold (at most MAX_LISTED_EVENTS listed). */
  missingCount: number;
  missing: Array<{ key: string; timestamp: string }>;
  /** Lines the export does not explain: events not in it, or written more than once. */
  unexpectedCount: number;
  unexpected: Array<{ key: string; timestamp: string; lines: number }>;
}

export interface WindowVerdict {
  /** Compared range, epoch ms (a grid window, or its part from the digests' start). */
  startMs: number;
  endMs: number;
  status: 'match' | 'differs';
  recorded: { count: number; hash: string };
  exported: { count: number; hash: string };
  /** Events the re-export has and the recorded digest lacks (a lower bound unless `exact`). */
  missing: number;
  /** Events the recorded digest has and the re-export lacks (a lower bound unless `exact`). */
  unexpected: number;
  /** The counts are exact (the digests match); otherwise see `sinks` for named events. */
  exact: boolean;
  /** Per file sink, for a differing window: the events themselves. */
  sinks?: SinkDifference[];
}

export interface VerifyReport {
  tenant: string;
  /** The range compared, widened to whole windows, epoch ms. */
  fromMs: number;
  toMs: number;
  /** Grid of the recorded digests; null when none were recorded yet. */
  windowMs: number | null;
  /** Digests cover events from here on. */
  sinceMs: number | null;
  cursorMs: number | null;
  /** Windows ending after this (cursor − overlap) are left for later: the next run may still add late events. */
  settledBeforeMs: number | null;
  windowsChecked: number;
  windowsMatched: number;
  windowsDiffering: number;
  /** Windows of the range not compared: before the digests' start or not settled yet. */
  windowsSkipped: number;
  missing: number;
  unexpected: number;
  /** The differing windows only. */
  windows: WindowVerdict[];
}
