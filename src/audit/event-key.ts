/**
 * The stable key of an event: the id column's value when there is one, else a SHA-256 of
 * the canonical row. Canonical = columns sorted by name, each name and value length-prefixed,
 * so reordering the export's columns keeps keys, and no value can be confused with a separator.
 *
 * Two rows with identical content (same instant, same user, same action…) are two events;
 * the second one in a same-instant group gets `#2`, the third `#3`. The counter is scoped to
 * the group of rows sharing one timestamp, so it is the same on every re-export of the window.
 */
import { hash } from 'node:crypto';

export function canonicalRow(columns: readonly string[], values: readonly string[], sortedIdx: readonly number[]): string {
  let s = '';
  for (const i of sortedIdx) {
    const name = columns[i] as string;
    const value = values[i] ?? '';
    s += `${name.length}:${name}${value.length}:${value};`;
  }
  return s;
}

export function sortedColumnOrder(columns: readonly string[]): number[] {
  return columns.map((_, i) => i).sort((a, b) => ((columns[a] as string) < (columns[b] as string) ? -1 : 1));
}

export function hashRow(canonical: string): string {
  // One-shot hash(): no Hash object per row (measurably faster at a million rows).
  return hash('sha256', canonical, 'hex');
}

/** Numbers repeated keys within one same-timestamp group (bounded: cleared when the time changes). */
export class OccurrenceCounter {
  private lastTs = Number.NaN;
  private readonly seen = new Map<string, number>();

  next(key: string, timestampMs: number): string {
    if (timestampMs !== this.lastTs) {
      this.seen.clear();
      this.lastTs = timestampMs;
    }
    const n = (this.seen.get(key) ?? 0) + 1;
    this.seen.set(key, n);
    return n === 1 ? key : `${key}#${n}`;
  }
}
