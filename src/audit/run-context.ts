/**
 * Mutable state of one run: the overlap keys, the sink lanes, the committed cursor and the
 * counters, with the two operations that move them: deliver a batch, commit a checkpoint.
 * Invariant: a key enters the dedupe set only after every sink acknowledged its event (or
 * its dead letter is durable), and the cursor moves only in a commit that carries those keys.
 */
import { columnDrift } from './columns.ts';
import type { AuditConfig } from './config-schema.ts';
import type { DedupeSet } from './dedupe-set.ts';
import { DigestAccumulator, combineDigests, type WindowDigest } from './digest/window-digest.ts';
import type { DeadLetter, DeadLetterStore } from './dead-letter/store.ts';
import { PARSE_DEAD_LETTER } from './dead-letter/store.ts';
import type { AuditEvent } from './event.ts';
import { fanOut, type SinkLane } from './fan-out.ts';
import type { AuditObserver } from './observer.ts';
import type { AuditProgress, AuditRunSummary } from './run-types.ts';
import type { AuditStateStore, BackfillProgress, DigestCommit } from './state/store.ts';
import { alignDown } from './windows.ts';

const DAY_MS = 86_400_000;

export interface RunContextInit {
  tenant: string;
  config: AuditConfig;
  state: AuditStateStore;
  deadLetters: DeadLetterStore;
  lanes: SinkLane[];
  dedupe: DedupeSet;
  cursorMs: number | null;
  columns: string[] | null;
  backfill: BackfillProgress | null;
  rangeStartMs: number;
  rangeEndMs: number;
  now: () => number;
  observer: AuditObserver;
  signal: AbortSignal | undefined;
  onProgress: ((p: AuditProgress) => void) | undefined;
  summary: AuditRunSummary;
  /** The first commit drops the stored digests and starts them here (first digests, or a new window length). */
  digestReset?: { sinceMs: number } | undefined;
}

export class RunContext {
  readonly tenant: string;
  readonly config: AuditConfig;
  readonly dedupe: DedupeSet;
  readonly lanes: SinkLane[];
  readonly now: () => number;
  readonly observer: AuditObserver;
  readonly signal: AbortSignal | undefined;
  readonly summary: AuditRunSummary;
  readonly overlapMs: number;
  /**
   * Events before this instant were exported by earlier runs (the cursor at this run's start −
   * overlap): a `--from` re-export delivers them again, but their windows' digests already count
   * them, so they are not added twice.
   */
  readonly exportedBeforeMs: number;
  cursorMs: number | null;
  columns: string[] | null;
  backfill: BackfillProgress | null;
  windowIndex = 0;
  windowCount = 0;
  /** How far this run got through its range (committed), epoch ms: the progress shown. */
  private doneMs: number;
  private columnsDirty = false;
  private backfillDirty = false;
  private readonly state: AuditStateStore;
  private readonly deadLetters: DeadLetterStore;
  private readonly rangeStartMs: number;
  private readonly rangeEndMs: number;
  private readonly onProgress: ((p: AuditProgress) => void) | undefined;
  /** Digests of the events handled since the last commit (docs/audit.md#verify). */
  private readonly digest: DigestAccumulator;
  /** Digests a failed commit did not record: carried by the next one. */
  private unrecorded: WindowDigest[] = [];
  private digestReset: { sinceMs: number } | undefined;

  constructor(init: RunContextInit) {
    this.tenant = init.tenant;
    this.config = init.config;
    this.state = init.state;
    this.deadLetters = init.deadLetters;
    this.lanes = init.lanes;
    this.dedupe = init.dedupe;
    this.cursorMs = init.cursorMs;
    this.columns = init.columns;
    this.backfill = init.backfill;
    this.backfillDirty = init.backfill !== null;
    this.rangeStartMs = init.rangeStartMs;
    this.rangeEndMs = init.rangeEndMs;
    this.now = init.now;
    this.observer = init.observer;
    this.doneMs = init.rangeStartMs;
    this.signal = init.signal;
    this.onProgress = init.onProgress;
    this.summary = init.summary;
    this.overlapMs = init.config.overlapMinutes * 60_000;
    this.exportedBeforeMs = init.cursorMs === null ? Number.NEGATIVE_INFINITY : init.cursorMs - this.overlapMs;
    this.digest = new DigestAccumulator(init.config.windowMinutes * 60_000);
    this.digestReset = init.digestReset;
  }

  /** A new export header: record drift against the previous one (not fatal, counted). */
  observeColumns(columns: string[]): void {
    const prev = this.columns;
    if (prev !== null) {
      const { added, removed } = columnDrift(prev, columns);
      if (added.length > 0 || removed.length > 0) {
        this.summary.schemaDrift.push({ added, removed });
        this.observer({ type: 'schema-drift', added, removed });
      }
    }
    if (prev === null || prev.length !== columns.length || prev.some((c, i) => c !== columns[i])) {
      this.columns = columns;
      this.columnsDirty = true;
    }
  }

  /** Deliver a batch to every sink; on success its keys join the dedupe set. */
  async deliver(events: AuditEvent[]): Promise<void> {
    if (events.length === 0) return;
    const results = await fanOut(events, this.lanes, this.deadLetters, this.signal, this.now());
    for (const e of events) {
      this.dedupe.add(e.key, e.timestampMs);
      if (e.timestampMs >= this.exportedBeforeMs) this.digest.add(e.key, e.timestampMs);
    }
    for (const [sink, r] of results) {
      const s = this.summary;
      s.delivered[sink] = (s.delivered[sink] ?? 0) + r.delivered + r.alreadyHeld;
      if (r.alreadyHeld > 0) s.alreadyHeld[sink] = (s.alreadyHeld[sink] ?? 0) + r.alreadyHeld;
      if (r.deadLettered > 0) s.deadLettered[sink] = (s.deadLettered[sink] ?? 0) + r.deadLettered;
      this.observer({ type: 'delivered', sink, ...r });
    }
  }

  /** Before a window is retried: the keys from the store, which now holds what earlier attempts committed. */
  async reloadKeys(): Promise<void> {
    this.dedupe.reload((await this.state.load()).dedupe);
  }

  /** Persist unparsable rows; their keys (with a timestamp past the request) stop repeats. */
  async deadLetterRows(rows: Array<{ letter: DeadLetter; key: string; keepUntilMs: number }>): Promise<void> {
    if (rows.length === 0) return;
    await this.deadLetters.add(rows.map((r) => r.letter));
    for (const r of rows) this.dedupe.add(r.key, r.keepUntilMs);
    this.summary.parseErrors += rows.length;
    this.summary.deadLettered[PARSE_DEAD_LETTER] = (this.summary.deadLettered[PARSE_DEAD_LETTER] ?? 0) + rows.length;
    this.observer({ type: 'parse-errors', rows: rows.length });
  }

  /** The digests to commit with the cursor: the events handled since the last commit. */
  private digestCommit(cursorMs: number): DigestCommit {
    const windowMs = this.digest.windowMs;
    const add = this.unrecorded.length > 0 ? combineDigests(this.unrecorded, this.digest.take(), 1) : this.digest.take();
    this.unrecorded = add;
    return {
      windowMs,
      ...(this.digestReset ? { reset: this.digestReset } : {}),
      add,
      pruneBeforeMs: alignDown(cursorMs - this.config.verify.retentionDays * DAY_MS, windowMs),
    };
  }

  /**
   * Commit the cursor (never backwards) together with the keys added since the last commit.
   * `cursorCandidateMs` is also how far this run got (inside `[windowStartMs, windowEndMs]`).
   */
  async checkpoint(cursorCandidateMs: number, windowStartMs: number, windowEndMs: number, phase: AuditProgress['phase']): Promise<void> {
    const cursorMs = this.cursorMs === null ? cursorCandidateMs : Math.max(this.cursorMs, cursorCandidateMs);
    const pruneBeforeMs = cursorMs - this.overlapMs;
    const added = this.dedupe.takePending(pruneBeforeMs);
    const nowMs = this.now();
    const finished = phase === 'window-done' && this.windowIndex === this.windowCount - 1;
    const clearBackfill = finished && this.backfill !== null;
    try {
      await this.state.commit({
        cursorMs,
        added,
        pruneBeforeMs,
        nowMs,
        ...(this.columnsDirty ? { columns: this.columns } : {}),
        ...(clearBackfill ? { backfill: null } : this.backfillDirty ? { backfill: this.backfill } : {}),
        digests: this.digestCommit(cursorMs),
      });
    } catch (e) {
      this.dedupe.restorePending(added);
      throw e;
    }
    this.columnsDirty = false;
    this.backfillDirty = false;
    this.unrecorded = [];
    this.digestReset = undefined;
    if (clearBackfill) this.backfill = null;
    this.dedupe.prune(pruneBeforeMs);
    this.cursorMs = cursorMs;
    this.summary.cursorMs = cursorMs;
    this.doneMs = Math.max(this.doneMs, Math.min(windowEndMs, Math.max(windowStartMs, cursorCandidateMs)));
    const ratio = finished ? 1 : this.ratio();
    this.observer({ type: 'committed', cursorMs, atMs: nowMs, progress: ratio });
    this.progress(phase, windowStartMs, windowEndMs, ratio);
  }

  /** Share of this run's range it has committed (not the stored cursor's place: a re-run starts at 0). */
  private ratio(): number {
    const span = this.rangeEndMs - this.rangeStartMs;
    return span <= 0 ? 0 : Math.min(1, Math.max(0, (this.doneMs - this.rangeStartMs) / span));
  }

  progress(phase: AuditProgress['phase'], windowStartMs: number, windowEndMs: number, ratio = this.ratio()): void {
    if (!this.onProgress) return;
    this.onProgress({
      phase,
      windowIndex: this.windowIndex,
      windowCount: this.windowCount,
      windowsDone: this.summary.windowsDone,
      windowStartMs,
      windowEndMs,
      cursorMs: this.cursorMs,
      ratio,
      eventsRead: this.summary.eventsRead,
    });
  }
}
