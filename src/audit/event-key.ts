/**
 * The stable key of an event: the id column's value when there is one, else a SHA-256 of
 * the canonical row. Canonical = columns sorted by name, each name and value length-prefixed,
 * so reordering the export's columns keeps keys, and no value can be confused with a separator.
 *
 * Two rows with identical content (same instant, same user, same action…) are two events:
 * PassKeys numbers the second one `#2`, the third `#3`, counting over a whole pass
 * of a window. The hash covers the row's time, so identical rows always fall into the same
 * window and every pass over it counts them all: the numbering is the same on every re-read,
 * whatever the row order.
 */
import { hash } from 'node:crypto';

/** The fixed part of the canonical row per column, in `sortedIdx` order: `<length>:<name>`. */
export function canonicalNames(columns: readonly string[], sortedIdx: readonly number[]): string[] {
  return sortedIdx.map((i) => `${(columns[i] as string).length}:${columns[i] as string}`);
}

/** The canonical row, from canonicalNames() of its header: `<len>:<name><len>:<value>;` per column, by name. */
export function canonicalRowOf(names: readonly string[], values: readonly string[], sortedIdx: readonly number[]): string {
  let s = '';
  for (let j = 0; j < sortedIdx.length; j++) {
    const value = values[sortedIdx[j] as number] ?? '';
    s += (names[j] as string) + value.length + ':' + value + ';';
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

/**
 * The keys of one window pass: numbers identical rows under a hash key (`#2`, `#3`, counted
 * over the whole pass, in any order) and spots an event the export lists twice under its id.
 */
export class PassKeys {
  private readonly seen = new Map<string, number>();

  /** A row's hash key, numbered when an identical row came before in this pass. */
  hashed(key: string): string {
    const n = this.seen.get(key);
    this.seen.set(key, (n ?? 0) + 1);
    return n === undefined ? key : `${key}#${n + 1}`;
  }

  /** A row's id key, or undefined when this pass already had it (the same event listed twice). */
  id(key: string): string | undefined {
    if (this.seen.has(key)) return undefined;
    this.seen.set(key, 1);
    return key;
  }
}
