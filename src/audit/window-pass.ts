/**
 * One attempt at one window: request the export, parse it as it streams, keep the events
 * inside `[startMs, endMs)` that were not delivered yet, hand them to the sinks in batches
 * (awaiting each batch, so backpressure reaches the socket), checkpoint on the way, and
 * commit the window's end as the new cursor once everything is acknowledged.
 *
 * Intermediate checkpoints: when the export has come in ascending time order so far, the
 * cursor may move to the last delivered event's time (everything before it was read); in
 * any other order only the keys are committed and the cursor waits for the window's end.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import { ErrorCodes, SyncError } from '../platform/errors.ts';
import { openAuditExport } from '../platform/audit-export.ts';
import type { PlatformClient } from '../platform/http-client.ts';
import { EventBuilder, type RowProblem } from './build-event.ts';
import { COLUMN_CANDIDATES, uniqueColumnNames } from './columns.ts';
import { readCsvRecords } from './csv-records.ts';
import { PARSE_DEAD_LETTER, type DeadLetter } from './dead-letter/store.ts';
import type { AuditEvent } from './event.ts';
import { auditMetrics } from './metrics.ts';
import type { RunContext } from './run-context.ts';
import { createTimestampParser, type TimestampParser } from './timestamp.ts';
import { precisionUnitMs, requestFor, type ExportWindow, type WindowRequest } from './windows.ts';

interface BadRow {
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
  /** Keys in the current batch, so a row repeated within one batch is not sent twice. */
  private readonly batchKeys = new Set<string>();
  private bad: BadRow[] = [];
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
    const res = await openAuditExport(platform, {
      startMs: this.request.startMs,
      endMs: this.request.endMs,
      precision: config.precision,
      ...config.filters,
      signal,
    });
    await this.consume(res.body);
  }

  /** Exposed for tests and the bench: run the pass over any CSV body. */
  async consume(body: Readable): Promise<void> {
    const signal = this.ctx.signal;
    try {
      for await (const item of readCsvRecords(body)) {
        if (signal?.aborted) throw signal.reason;
        if (item.kind === 'row') await this.onRow(item.values, item.line);
        else if (item.kind === 'header') this.onHeader(item.cells);
        else await this.onBad({ line: item.line, raw: item.raw, code: item.code, reason: item.reason });
      }
      await this.flush();
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
      const wanted = config.timestamp.column ? `the configured column "${config.timestamp.column}"` : `none of ${COLUMN_CANDIDATES.timestamp.join(', ')}`;
      throw new SyncError(ErrorCodes.BAD_RESPONSE, 'fatal', `audit-log export has no timestamp column (${wanted}; columns are ${columns.join(', ')}): set audit.timestamp.column`);
    }
    if (config.columns.id && this.builder.plan.id < 0) {
      this.ctx.logger?.warn({ column: config.columns.id }, 'configured audit id column is missing from the export; keys fall back to a hash of the row');
    }
  }

  private async onRow(values: string[], line: number): Promise<void> {
    this.row++;
    this.ctx.summary.rowsRead++;
    const builder = this.builder;
    if (!builder) return;
    const ts = builder.timestampOf(values);
    if (typeof ts !== 'number') return this.onBad({ raw: toCsvLine(values), line, row: this.row, ...(ts as RowProblem) });
    if (ts < this.window.startMs || ts >= this.window.endMs) return;
    this.ctx.summary.eventsRead++;
    this.unreported.read++;
    if (ts < this.lastTs) this.ascending = false;
    this.lastTs = ts;
    const event = builder.build(values, ts);
    if (this.ctx.dedupe.has(event.key) || this.batchKeys.has(event.key)) {
      this.ctx.summary.duplicatesSkipped++;
      this.unreported.duplicates++;
      return;
    }
    this.batch.push(event);
    this.batchKeys.add(event.key);
    if (this.batch.length >= this.ctx.config.batchSize) await this.flush();
  }

  private async onBad(b: { raw: string; code: string; reason: string; line?: number; row?: number }): Promise<void> {
    // Same raw text in the same export range → the same dead letter: recorded once.
    const key = `bad:${createHash('sha256').update(b.raw).digest('hex')}`;
    if (this.ctx.dedupe.has(key) || this.bad.some((x) => x.key === key)) return;
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
    if (this.bad.length >= this.ctx.config.batchSize) await this.flush();
  }

  /** Per-event counters go to the metrics once per batch (a labelled inc per row is measurable). */
  private reportCounts(): void {
    const { read, duplicates } = this.unreported;
    if (read > 0) auditMetrics.eventsRead.inc({ tenant: this.ctx.tenant }, read);
    if (duplicates > 0) auditMetrics.duplicatesSkipped.inc({ tenant: this.ctx.tenant }, duplicates);
    this.unreported = { read: 0, duplicates: 0 };
  }

  private async flush(): Promise<void> {
    this.reportCounts();
    const bad = this.bad;
    const batch = this.batch;
    if (bad.length > 0) {
      this.bad = [];
      await this.ctx.deadLetterRows(bad);
    }
    if (batch.length > 0) {
      this.batch = [];
      this.batchKeys.clear();
      await this.ctx.deliver(batch);
      this.sinceCheckpoint += batch.length;
    }
    if (this.sinceCheckpoint >= this.ctx.config.checkpointEvents) await this.midCheckpoint();
  }

  private async midCheckpoint(): Promise<void> {
    this.sinceCheckpoint = 0;
    const candidate = this.ascending && this.lastTs > this.window.startMs ? Math.min(this.lastTs, this.window.endMs) : this.window.startMs;
    await this.ctx.checkpoint(candidate, this.window.startMs, this.window.endMs, 'checkpoint');
  }
}
