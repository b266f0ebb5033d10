/**
 * One attempt at one window: request the export, parse it as it streams, keep the events
 * inside `[startMs, endMs)` that were not delivered yet, hand them to the sinks in batches
 * (at most one batch in flight while the next is parsed, so backpressure reaches the
 * socket), checkpoint on the way, and commit the window's end as the new cursor once
 * everything is acknowledged.
 *
 * Intermediate checkpoints: when the export has come in ascending time order so far, the
 * cursor may move to the last delivered event's time (everything before it was read); in
 * any other order only the keys are committed and the cursor waits for the window's end.
 */
import { hash, randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import { ErrorCodes, SyncError } from '../errors.ts';
import { openAuditExport } from '../platform/audit-export.ts';
import type { PlatformClient } from '../platform/http-client.ts';
import { EventBuilder, type RowProblem } from './build-event.ts';
import { COLUMN_CANDIDATES, uniqueColumnNames } from './columns.ts';
import { ReadBudget } from './csv/read-budget.ts';
import { readCsv, type BadRow, type CsvHandler } from './csv/read-csv.ts';
import { PARSE_DEAD_LETTER, type DeadLetter } from './dead-letter/store.ts';
import { BAD_ROW_KEY_PREFIX } from './dedupe-set.ts';
import type { AuditEvent } from './event.ts';
import { PassKeys } from './event-key.ts';
import type { RunContext } from './run-context.ts';
import { createTimestampParser, type TimestampParser } from './timestamp.ts';
import { precisionUnitMs, requestFor, type ExportWindow, type WindowRequest } from './windows.ts';

interface BadLetter {
  letter: DeadLetter;
  key: string;
  keepUntilMs: number;
}

/** A row rebuilt as CSV text, for dead letters of rows csv-parse accepted but we could not use. */
function toCsvLine(values: readonly string[]): string {
  return values.map((v) => (/[",\r\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v)).join(',');
}

export class WindowPass {
  private readonly ctx: RunContext;
  private readonly window: ExportWindow;
  private readonly request: WindowRequest;
  private readonly parseTimestamp: TimestampParser;
  private builder: EventBuilder | undefined;
  private batch: AuditEvent[] = [];
  /** Keys seen in this pass: identical rows numbered, an id listed twice spotted (see event-key.ts). */
  private readonly keys = new PassKeys();
  /** The batch being delivered while the next one is built. */
  private inflight: Promise<void> | undefined;
  private bad: BadLetter[] = [];
  /** Keys of the bad rows this pass recorded (the dedupe set holds only earlier passes' keys). */
  private readonly badKeys = new Set<string>();
  private ascending = true;
  private lastTs = Number.NEGATIVE_INFINITY;
  private sinceCheckpoint = 0;
  private row = 0;
  private unreported = { read: 0, duplicates: 0 };

  constructor(ctx: RunContext, window: ExportWindow, parseTimestamp?: TimestampParser) {
    this.ctx = ctx;
    this.window = window;
    this.request = requestFor(window, ctx.config.precision);
    this.parseTimestamp = parseTimestamp ?? createTimestampParser(ctx.config.timestamp.timezone);
  }

  async run(platform: PlatformClient): Promise<void> {
    const { config, signal } = this.ctx;
    const budget = new ReadBudget(config.limits.windowDeadlineSeconds * 1000);
    const deadline = new AbortController();
    const res = await budget.charge(
      () =>
        openAuditExport(platform, {
          startMs: this.request.startMs,
          endMs: this.request.endMs,
          precision: config.precision,
          ...config.filters,
          signal: signal ? AbortSignal.any([signal, deadline.signal]) : deadline.signal,
        }),
      (e) => deadline.abort(e),
    );
    await this.consume(res.body, budget);
  }

  /** The pass over an opened CSV body (any source of export bytes). */
  async consume(body: Readable, budget?: ReadBudget): Promise<void> {
    const { limits } = this.ctx.config;
    const handler: CsvHandler = {
      header: (cells) => this.onHeader(cells),
      row: (values, line) => this.onRow(values, line),
      bad: (b: BadRow) => this.onBad(b),
    };
    try {
      await readCsv(body, handler, {
        maxRecordBytes: limits.maxRecordBytes,
        maxBytes: Math.round(limits.maxWindowMegabytes * 1024 * 1024),
        ...(budget ? { budget } : {}),
      });
      await this.flush();
      await this.settle();
    } catch (e) {
      // Never leave a delivery running behind a failed pass (a retry would write concurrently).
      // A sink that failed the batch in flight decides: the run stops, as for any sink
      // failure — retrying the window would re-send that batch to the sinks that did take it.
      await this.settle();
      throw e;
    } finally {
      this.reportCounts();
    }
    this.ctx.summary.windowsDone++;
    await this.ctx.checkpoint(this.window.endMs, this.window.startMs, this.window.endMs, 'window-done');
  }

  private onHeader(cells: string[]): void {
    const columns = uniqueColumnNames(cells);
    const { config } = this.ctx;
    this.ctx.observeColumns(columns);
    this.builder = new EventBuilder(columns, {
      fieldStyle: config.fieldStyle,
      overrides: { timestamp: config.timestamp.column, ...config.columns },
      parseTimestamp: this.parseTimestamp,
    });
    if (this.builder.plan.timestamp < 0) {
      const wanted = config.timestamp.column
        ? `the configured column "${config.timestamp.column}"`
        : `none of ${COLUMN_CANDIDATES.timestamp.join(', ')}`;
      // Either not a header at all (a data row, a line of text) or a header naming its time
      // column differently: the window fails either way, and nothing of it counts.
      throw new SyncError(
        ErrorCodes.EXPORT_NO_HEADER,
        'transient',
        `audit-log export has no header row with a timestamp column (${wanted}; first row is ${columns
          .slice(0, 8)
          .map((c) => JSON.stringify(c.slice(0, 40)))
          .join(', ')}): if the export names it differently, set audit.timestamp.column`,
      );
    }
    if (config.columns.id && this.builder.plan.id < 0) this.ctx.observer({ type: 'id-column-missing', column: config.columns.id });
  }

  private onRow(values: string[], line: number): Promise<void> | undefined {
    this.row++;
    this.ctx.summary.rowsRead++;
    const builder = this.builder;
    if (!builder) return undefined;
    const ts = builder.timestampOf(values);
    if (typeof ts !== 'number') return this.onBad({ raw: toCsvLine(values), line, row: this.row, ...(ts as RowProblem) });
    if (ts < this.window.startMs || ts >= this.window.endMs) return undefined;
    this.ctx.summary.eventsRead++;
    this.unreported.read++;
    if (ts < this.lastTs) this.ascending = false;
    this.lastTs = ts;
    const key = builder.keyOf(values, this.keys);
    if (key === undefined || this.ctx.dedupe.has(key)) {
      this.ctx.summary.duplicatesSkipped++;
      this.unreported.duplicates++;
      return undefined;
    }
    this.batch.push(builder.build(values, ts, key));
    return this.batch.length >= this.ctx.config.batchSize ? this.flush() : undefined;
  }

  private onBad(b: { raw: string; code: string; reason: string; line?: number; row?: number }): Promise<void> | undefined {
    // Same raw text in the same export range → the same dead letter: recorded once.
    const key = `${BAD_ROW_KEY_PREFIX}${hash('sha256', b.raw, 'hex')}`;
    if (this.ctx.dedupe.has(key) || this.badKeys.has(key)) return undefined;
    this.badKeys.add(key);
    const letter: DeadLetter = {
      id: randomUUID(),
      sink: PARSE_DEAD_LETTER,
      atMs: this.ctx.now(),
      code: b.code,
      reason: b.reason,
      attempts: 0,
      raw: b.raw,
      ...(b.line !== undefined ? { line: b.line } : {}),
      ...(b.row !== undefined ? { row: b.row } : {}),
      window: { startMs: this.window.startMs, endMs: this.window.endMs },
    };
    // Kept until no later request can include this row again.
    this.bad.push({ letter, key, keepUntilMs: this.request.endMs + precisionUnitMs(this.ctx.config.precision) });
    return this.bad.length >= this.ctx.config.batchSize ? this.flush() : undefined;
  }

  /** Per-event counts are reported once per batch. */
  private reportCounts(): void {
    const { read, duplicates } = this.unreported;
    if (read > 0 || duplicates > 0) this.ctx.observer({ type: 'events-read', read, duplicates });
    this.unreported = { read: 0, duplicates: 0 };
  }

  /**
   * Hands the batch to the sinks and returns as soon as the previous batch is acknowledged:
   * one batch is in flight while the next one is parsed (bounded memory, sink I/O overlapped
   * with parsing, batches still reach the sinks in order).
   */
  private async flush(): Promise<void> {
    this.ctx.signal?.throwIfAborted();
    this.reportCounts();
    const bad = this.bad;
    const batch = this.batch;
    await this.settle();
    if (bad.length > 0) {
      this.bad = [];
      await this.ctx.deadLetterRows(bad);
    }
    if (batch.length > 0) {
      this.batch = [];
      const p = this.ctx.deliver(batch);
      // Marked handled now; the failure surfaces where the promise is awaited (settle()).
      p.catch(() => undefined);
      this.inflight = p;
      this.sinceCheckpoint += batch.length;
    }
    if (this.sinceCheckpoint >= this.ctx.config.checkpointEvents) {
      await this.settle();
      await this.midCheckpoint();
    }
  }

  /** Waits for the batch in flight (its keys are in the dedupe set afterwards). */
  private async settle(): Promise<void> {
    const p = this.inflight;
    if (!p) return;
    this.inflight = undefined;
    await p;
  }

  private async midCheckpoint(): Promise<void> {
    this.sinceCheckpoint = 0;
    const candidate = this.ascending && this.lastTs > this.window.startMs ? Math.min(this.lastTs, this.window.endMs) : this.window.startMs;
    await this.ctx.checkpoint(candidate, this.window.startMs, this.window.endMs, 'checkpoint');
  }
}
