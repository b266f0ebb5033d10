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
import { ErrorCodes, SyncError } from '../platform/errors.ts';
import { openAuditExport } from '../platform/audit-export.ts';
import type { PlatformClient } from '../platform/http-client.ts';
import { EventBuilder, type RowProblem } from './build-event.ts';
import { COLUMN_CANDIDATES, uniqueColumnNames } from './columns.ts';
import { readCsv, type BadRow, type CsvHandler } from './csv/read-csv.ts';
import { PARSE_DEAD_LETTER, type DeadLetter } from './dead-letter/store.ts';
import { BAD_ROW_KEY_PREFIX } from './dedupe-set.ts';
import type { AuditEvent } from './event.ts';
import { auditMetrics } from './metrics.ts';
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
  /** Keys in the current batch, built on the first lookup (events after every key held need none). */
  private batchKeys: Set<string> | undefined;
  /** The batch being delivered while the next one is built, and its keys. */
  private inflight: Promise<void> | undefined;
  private inflightBatch: readonly AuditEvent[] = [];
  private inflightKeys: Set<string> | undefined;
  private bad: BadLetter[] = [];
  private ascending = true;
  private lastTs = Number.NEGATIVE_INFINITY;
  private sinceCheckpoint = 0;
  /** Latest time of an event this pass handed on (in the batch, in flight or delivered). */
  private maxAcceptedTs = Number.NEGATIVE_INFINITY;
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

  /** The pass over an opened CSV body (any source of export bytes). */
  async consume(body: Readable): Promise<void> {
    const handler: CsvHandler = {
      header: (cells) => this.onHeader(cells),
      row: (values, line, hash) => this.onRow(values, line, hash),
      bad: (b: BadRow) => this.onBad(b),
    };
    try {
      await readCsv(body, handler, { idColumn: this.ctx.config.columns.id });
      await this.flush();
      await this.settle();
    } catch (e) {
      // Never leave a delivery running behind a failed pass (a retry would write concurrently).
      await this.inflight?.catch(() => undefined);
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
      const wanted = config.timestamp.column ? `the configured column "${config.timestamp.column}"` : `none of ${COLUMN_CANDIDATES.timestamp.join(', ')}`;
      throw new SyncError(ErrorCodes.BAD_RESPONSE, 'fatal', `audit-log export has no timestamp column (${wanted}; columns are ${columns.join(', ')}): set audit.timestamp.column`);
    }
    if (config.columns.id && this.builder.plan.id < 0) {
      this.ctx.logger?.warn({ column: config.columns.id }, 'configured audit id column is missing from the export; keys fall back to a hash of the row');
    }
  }

  private onRow(values: string[], line: number, hash: string | undefined): Promise<void> | undefined {
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
    const event = builder.build(values, ts, hash);
    if (this.mayBeKnown(ts) && this.isKnown(event.key)) {
      this.ctx.summary.duplicatesSkipped++;
      this.unreported.duplicates++;
      return undefined;
    }
    this.batch.push(event);
    this.batchKeys?.add(event.key);
    if (ts > this.maxAcceptedTs) this.maxAcceptedTs = ts;
    return this.batch.length >= this.ctx.config.batchSize ? this.flush() : undefined;
  }

  /**
   * Whether an event at `ts` can have been seen already. A hashed key covers the whole row,
   * time included, and rows repeated within one timestamp are numbered (#2…), so the same
   * key never comes with a later time: an event after every key held is new. Keys from an
   * id column carry no such guarantee and are always looked up.
   */
  private mayBeKnown(ts: number): boolean {
    return !this.builder!.keysAreHashes || ts <= this.maxAcceptedTs || ts <= this.ctx.dedupe.maxEventTimestampMs;
  }

  /** Delivered or dead-lettered before, in the batch being built, or in the one in flight. */
  private isKnown(key: string): boolean {
    if (this.ctx.dedupe.has(key)) return true;
    this.batchKeys ??= new Set(this.batch.map((e) => e.key));
    if (this.batchKeys.has(key)) return true;
    this.inflightKeys ??= new Set(this.inflightBatch.map((e) => e.key));
    return this.inflightKeys.has(key);
  }

  private onBad(b: { raw: string; code: string; reason: string; line?: number; row?: number }): Promise<void> | undefined {
    // Same raw text in the same export range → the same dead letter: recorded once.
    const key = `${BAD_ROW_KEY_PREFIX}${hash('sha256', b.raw, 'hex')}`;
    if (this.ctx.dedupe.has(key) || this.bad.some((x) => x.key === key)) return undefined;
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

  /** Per-event counters go to the metrics once per batch (a labelled inc per row is measurable). */
  private reportCounts(): void {
    const { read, duplicates } = this.unreported;
    if (read > 0) auditMetrics.eventsRead.inc({ tenant: this.ctx.tenant }, read);
    if (duplicates > 0) auditMetrics.duplicatesSkipped.inc({ tenant: this.ctx.tenant }, duplicates);
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
      this.inflightBatch = batch;
      this.inflightKeys = this.batchKeys;
      this.batchKeys = undefined;
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
    try {
      await p;
    } finally {
      this.inflightBatch = [];
      this.inflightKeys = undefined;
    }
  }

  private async midCheckpoint(): Promise<void> {
    this.sinceCheckpoint = 0;
    const candidate = this.ascending && this.lastTs > this.window.startMs ? Math.min(this.lastTs, this.window.endMs) : this.window.startMs;
    await this.ctx.checkpoint(candidate, this.window.startMs, this.window.endMs, 'checkpoint');
  }
}
