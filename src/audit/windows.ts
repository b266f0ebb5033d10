/**
 * Splits the range to export into bounded windows on a fixed grid, and turns a window into
 * the request sent to the server. The server's window semantics are unknown (precision,
 * end inclusive or not), so requests are widened to whole units and every event is then
 * filtered client-side to `[startMs, endMs)`.
 */
import type { AuditExportPrecision } from '../platform/audit-export.ts';

export const DAY_MS = 86_400_000;
export const SECOND_MS = 1000;

export interface ExportWindow {
  /** Client-side filter, inclusive, epoch ms. */
  startMs: number;
  /** Client-side filter, exclusive, epoch ms. */
  endMs: number;
}

export interface WindowRequest {
  startMs: number;
  endMs: number;
}

export function precisionUnitMs(precision: AuditExportPrecision): number {
  return precision === 'date' ? DAY_MS : SECOND_MS;
}

export function alignDown(ms: number, unit: number): number {
  return Math.floor(ms / unit) * unit;
}

export function alignUp(ms: number, unit: number): number {
  return Math.ceil(ms / unit) * unit;
}

/**
 * The request covering a window. `date`: from the window's first day to the day after its
 * last instant (so an exclusive `end` still includes it). `datetime`: whole seconds, one
 * second wider on each side, in case the server truncates or treats a bound as exclusive.
 */
export function requestFor(w: ExportWindow, precision: AuditExportPrecision): WindowRequest {
  if (precision === 'date') return { startMs: alignDown(w.startMs, DAY_MS), endMs: alignUp(w.endMs, DAY_MS) };
  return { startMs: alignDown(w.startMs, SECOND_MS) - SECOND_MS, endMs: alignUp(w.endMs, SECOND_MS) + SECOND_MS };
}

/** Windows covering `[startMs, endMs)`, cut on multiples of `windowMs` since the epoch. */
export function planWindows(startMs: number, endMs: number, windowMs: number): ExportWindow[] {
  const out: ExportWindow[] = [];
  let s = startMs;
  while (s < endMs) {
    const e = Math.min(endMs, alignDown(s, windowMs) + windowMs);
    out.push({ startMs: s, endMs: e });
    s = e;
  }
  return out;
}

export interface RangeInput {
  cursorMs: number | null;
  nowMs: number;
  overlapMs: number;
  settleMs: number;
  /** Where a tenant without a cursor starts (audit.backfill.from), epoch ms. */
  backfillFromMs?: number | undefined;
  /** Explicit bounds of this run (`--from` / `--to`). */
  fromMs?: number | undefined;
  toMs?: number | undefined;
}

/** `[cursor − overlap, min(to, now − settle))`, or the explicit/backfill start. */
export function planRange(r: RangeInput): { startMs: number; endMs: number } {
  const settled = r.nowMs - r.settleMs;
  const endMs = r.toMs === undefined ? settled : Math.min(r.toMs, settled);
  let startMs: number;
  if (r.fromMs !== undefined) startMs = r.fromMs;
  else if (r.cursorMs !== null) startMs = r.cursorMs - r.overlapMs;
  else startMs = r.backfillFromMs ?? settled - r.overlapMs;
  return { startMs, endMs };
}
