/**
 * The simulated audit log: generated events merged with late insertions, the current CSV
 * layout, and the in-process API tests use to predict or compare what an export returns.
 */
import { randomUUID } from 'node:crypto';
import { AuditGenerator } from './audit-events.ts';
import { CsvLayout } from './audit-csv.ts';
import type { AuditFilters, AuditSimOptions, LateEventInput, SimAudit, SimAuditEvent, SimAuditEventCore } from './audit-types.ts';
import { resolveWindow, type Window } from './audit-window.ts';

const DEFAULT_START = '2026-11-01T00:00:00Z';

export interface ExportRow {
  event: SimAuditEventCore;
  values: string[];
}

export class SimAuditLog implements SimAudit {
  featureEnabled: boolean;
  private opts: AuditSimOptions;
  private readonly seed: number;
  private gen!: AuditGenerator;
  layout!: CsvLayout;
  /** Sorted by timestampMs (stable for equal times). */
  private late: SimAuditEventCore[] = [];

  constructor(seed: number, opts: AuditSimOptions, featureEnabled: boolean) {
    this.seed = seed;
    this.opts = { ...opts };
    this.featureEnabled = featureEnabled;
    this.rebuild();
  }

  options(): Readonly<AuditSimOptions> {
    return this.opts;
  }

  setOptions(partial: Partial<AuditSimOptions>): void {
    this.opts = { ...this.opts, ...partial };
    this.rebuild();
  }

  setFeatureEnabled(enabled: boolean): void {
    this.featureEnabled = enabled;
  }

  header(): string[] {
    return this.layout.columns.map((c) => c.header);
  }

  insertLateEvent(input: LateEventInput): SimAuditEvent {
    const raw =
      input.timestamp instanceof Date
        ? input.timestamp.getTime()
        : typeof input.timestamp === 'number'
          ? input.timestamp
          : Date.parse(input.timestamp);
    if (Number.isNaN(raw)) throw new Error(`insertLateEvent: invalid timestamp ${String(input.timestamp)}`);
    const e: SimAuditEventCore = {
      index: -1 - this.late.length,
      id: input.id ?? randomUUID(),
      timestampMs: this.opts.timestampPrecision === 's' ? Math.floor(raw / 1000) * 1000 : raw,
      eventName: input.eventName ?? 'Logged in',
      userEmail: input.userEmail ?? 'late.arrival@example.com',
      ipAddress: input.ipAddress ?? '203.0.113.7',
      deploymentId: input.deploymentId ?? '1000',
      userAgent: input.userAgent ?? 'late-event',
      details: typeof input.details === 'string' ? input.details : JSON.stringify(input.details ?? { late: true }),
      late: true,
    };
    let at = this.late.length;
    while (at > 0 && (this.late[at - 1] as SimAuditEventCore).timestampMs > e.timestampMs) at--;
    this.late.splice(at, 0, e);
    return this.layout.withFields(e);
  }

  window(start?: string | null, end?: string | null): Window {
    return resolveWindow(start, end, { endInclusive: this.opts.endInclusive ?? false, nowMs: (this.opts.clock ?? Date.now)() });
  }

  countEvents(start?: string, end?: string, filters: AuditFilters = {}): number {
    const w = this.window(start, end);
    if (!filters.search && !filters.eventName && !filters.userEmail) {
      const from = this.gen.firstIndexAtOrAfter(w.fromMs);
      const to = this.gen.firstIndexAtOrAfter(w.toMs);
      const late = this.late.filter((e) => e.timestampMs >= w.fromMs && e.timestampMs < w.toMs).length;
      return Math.min(Math.max(0, to - from) + late, this.opts.maxRows ?? Infinity);
    }
    let n = 0;
    for (const _ of this.rows(w, filters)) n++;
    return n;
  }

  *eventsIn(start?: string, end?: string, filters: AuditFilters = {}): IterableIterator<SimAuditEvent> {
    for (const row of this.rows(this.window(start, end), filters)) yield this.layout.withFields(row.event, row.values);
  }

  /**
   * Rows of a window in export order, filtered; values follow the current layout. With
   * `ids: 'as-needed'` generated events get an id only when a column can show it.
   */
  *rows(w: Window, filters: AuditFilters, ids: 'always' | 'as-needed' = 'always'): IterableIterator<ExportRow> {
    const match = matcher(filters);
    const max = this.opts.maxRows ?? Infinity;
    const layout = this.layout; // an export keeps the columns it started with, whatever setOptions does meanwhile
    let n = 0;
    for (const event of this.ordered(w, ids === 'always' || layout.mayShowIds)) {
      const values = layout.values(event);
      if (!match(event, values)) continue;
      if (n++ >= max) return;
      yield { event, values };
    }
  }

  private *ordered(w: Window, withIds: boolean): IterableIterator<SimAuditEventCore> {
    const gen = this.gen;
    const from = gen.firstIndexAtOrAfter(w.fromMs);
    const to = gen.firstIndexAtOrAfter(w.toMs);
    const late = this.late.filter((e) => e.timestampMs >= w.fromMs && e.timestampMs < w.toMs);
    if ((this.opts.order ?? 'asc') === 'asc') {
      let j = 0;
      for (let i = from; i < to; i++) {
        const e = gen.eventAt(i, withIds);
        while (j < late.length && (late[j] as SimAuditEventCore).timestampMs < e.timestampMs) yield late[j++] as SimAuditEventCore;
        yield e;
      }
      while (j < late.length) yield late[j++] as SimAuditEventCore;
    } else {
      let j = late.length - 1;
      for (let i = to - 1; i >= from; i--) {
        const e = gen.eventAt(i, withIds);
        while (j >= 0 && (late[j] as SimAuditEventCore).timestampMs > e.timestampMs) yield late[j--] as SimAuditEventCore;
        yield e;
      }
      while (j >= 0) yield late[j--] as SimAuditEventCore;
    }
  }

  private rebuild(): void {
    const startMs = Date.parse(this.opts.startAt ?? DEFAULT_START);
    if (Number.isNaN(startMs)) throw new Error(`audit.startAt is not an ISO 8601 time: ${this.opts.startAt}`);
    const endMs = this.opts.endAt ? Date.parse(this.opts.endAt) : Infinity;
    if (Number.isNaN(endMs)) throw new Error(`audit.endAt is not an ISO 8601 time: ${this.opts.endAt}`);
    this.gen = new AuditGenerator({
      seed: this.seed,
      startMs,
      endMs,
      eventsPerHour: this.opts.eventsPerHour ?? 60,
      precision: this.opts.timestampPrecision ?? 'ms',
      multilineDetailsRate: this.opts.multilineDetailsRate ?? 0.05,
    });
    this.layout = new CsvLayout(this.opts);
  }
}

function matcher(f: AuditFilters): (e: SimAuditEventCore, values: string[]) => boolean {
  const search = f.search?.toLowerCase();
  const name = f.eventName?.toLowerCase();
  const email = f.userEmail?.toLowerCase();
  return (e, values) =>
    (!name || e.eventName.toLowerCase() === name) &&
    (!email || e.userEmail.toLowerCase() === email) &&
    (!search || values.some((v) => v.toLowerCase().includes(search)));
}
