/**
 * Export window semantics chosen for the simulator (the real platform's are not documented,
 * so clients must not depend on them — they should overlap windows and deduplicate):
 *  - `start` is inclusive; a date-only start means 00:00:00Z of that day.
 *  - `end` is exclusive by default (option endInclusive makes a datetime end inclusive);
 *    a date-only end means the END of that day: the whole day is included.
 *  - Missing start: from the beginning of the log; missing end: up to the clock (now).
 *  - A datetime without an offset is read as UTC.
 */

export class WindowError extends Error {}

export interface Window {
  /** Inclusive, epoch ms (may be -Infinity). */
  fromMs: number;
  /** Exclusive, epoch ms. */
  toMs: number;
}

const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATETIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?$/i;

function parseBound(raw: string, name: string, isEnd: boolean, endInclusive: boolean): number {
  const v = raw.trim();
  const d = DATE_ONLY.exec(v);
  if (d) {
    const ms = Date.UTC(Number(d[1]), Number(d[2]) - 1, Number(d[3]));
    if (Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== v) throw new WindowError(`Invalid ${name} date: ${raw}`);
    return isEnd ? ms + 86_400_000 : ms;
  }
  if (!DATETIME.test(v)) throw new WindowError(`Invalid ${name} date: expected ISO 8601 (YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ), got ${raw}`);
  const withZone = /(Z|[+-]\d{2}:?\d{2})$/i.test(v) ? v : `${v}Z`;
  const ms = Date.parse(withZone);
  if (Number.isNaN(ms)) throw new WindowError(`Invalid ${name} date: ${raw}`);
  return isEnd && endInclusive ? ms + 1 : ms;
}

export function resolveWindow(
  start: string | undefined | null,
  end: string | undefined | null,
  opts: { endInclusive?: boolean; nowMs: number },
): Window {
  const fromMs = start ? parseBound(start, 'start', false, false) : Number.NEGATIVE_INFINITY;
  const toMs = end ? parseBound(end, 'end', true, opts.endInclusive ?? false) : opts.nowMs;
  if (toMs < fromMs) throw new WindowError('start must not be after end');
  return { fromMs, toMs };
}
