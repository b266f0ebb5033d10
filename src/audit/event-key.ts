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
 *
 * Hash keys are counted by their first 64 bits in an open-addressing table on typed arrays:
 * no string or map entry per row stays alive for the pass (a `Map` of the hex keys cost ~12 %
 * of the export's CPU and its entries were promoted to the old generation at every window).
 * Two different rows sharing those 64 bits (about 3 × 10⁻¹⁰ per window of 100,000 rows) would
 * make the second one `#2` of the first: still a distinct key, so never a lost event; at worst
 * one duplicate if a later re-export lists the two in the other order.
 */
export class PassKeys {
  private readonly ids = new Set<string>();
  private hi = new Int32Array(1024);
  private lo = new Int32Array(1024);
  /** Occurrences so far per slot; 0 = empty slot. */
  private count = new Uint32Array(1024);
  private used = 0;

  /** A row's hash key (64 hex digits), numbered when an identical row came before in this pass. */
  hashed(key: string): string {
    const hi = hexInt(key, 0);
    const lo = hexInt(key, 8);
    if (this.used * 2 >= this.count.length) this.grow();
    const slot = this.slotOf(hi, lo);
    const n = this.count[slot] as number;
    if (n === 0) {
      this.hi[slot] = hi;
      this.lo[slot] = lo;
      this.used++;
    }
    this.count[slot] = n + 1;
    return n === 0 ? key : `${key}#${n + 1}`;
  }

  /** A row's id key, or undefined when this pass already had it (the same event listed twice). */
  id(key: string): string | undefined {
    if (this.ids.has(key)) return undefined;
    this.ids.add(key);
    return key;
  }

  /** The slot holding (hi, lo), or the empty slot where it goes (linear probing). */
  private slotOf(hi: number, lo: number): number {
    const mask = this.count.length - 1;
    let i = (lo ^ Math.imul(hi, 0x9e3779b1)) & mask;
    while (this.count[i] !== 0 && (this.hi[i] !== hi || this.lo[i] !== lo)) i = (i + 1) & mask;
    return i;
  }

  private grow(): void {
    const { hi, lo, count } = this;
    this.hi = new Int32Array(hi.length * 2);
    this.lo = new Int32Array(lo.length * 2);
    this.count = new Uint32Array(count.length * 2);
    for (let i = 0; i < count.length; i++) {
      if (count[i] === 0) continue;
      const slot = this.slotOf(hi[i] as number, lo[i] as number);
      this.hi[slot] = hi[i] as number;
      this.lo[slot] = lo[i] as number;
      this.count[slot] = count[i] as number;
    }
  }
}

/** Eight hex digits of `s` from `at`, as a 32-bit integer (any other character counts as 0). */
function hexInt(s: string, at: number): number {
  let v = 0;
  for (let i = at; i < at + 8; i++) {
    const c = s.charCodeAt(i);
    const d = c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : c >= 65 && c <= 70 ? c - 55 : 0;
    v = (v << 4) | d;
  }
  return v;
}
