/**
 * The keys an export pass must not deliver again: those the state store held when the pass
 * began (delivered, or dead-lettered, inside the overlap window), pruned as the cursor moves,
 * plus the keys this run has delivered and not committed yet (`pending`, for the next commit).
 *
 * Keys delivered in this run are not looked up again in this run, so they are not held once
 * committed: a pass never meets one of its own keys twice (PassKeys numbers identical rows and
 * spots an id listed twice), a run's windows do not overlap, and a retried window first
 * reloads the set from the store (`reload()`), which then holds what the failed attempt
 * committed. Memory is bounded by one overlap window of keys plus one checkpoint's, whatever
 * the number of rows (a map of every key of the run cost ~8 % of the export's CPU and grew
 * with each window).
 */

/** Keys of dead-lettered CSV rows start with this (see WindowPass). */
export const BAD_ROW_KEY_PREFIX = 'bad:';

export class DedupeSet {
  /** key → the largest timestamp it was stored with (epoch ms). */
  private known = new Map<string, number>();
  /** Delivered since the last commit, in delivery order. */
  private pending: Array<[string, number]> = [];

  constructor(entries: Iterable<readonly [string, number]> = []) {
    this.reload(entries);
  }

  /** Keys held for lookups (not counting the pending ones). */
  get size(): number {
    return this.known.size;
  }

  has(key: string): boolean {
    return this.known.size > 0 && this.known.has(key);
  }

  /** A key delivered (or dead-lettered): carried by the next commit. */
  add(key: string, timestampMs: number): void {
    this.pending.push([key, timestampMs]);
  }

  /**
   * The store's keys again, before a window is retried: what earlier attempts committed, plus
   * what they delivered and did not commit (still pending).
   */
  reload(entries: Iterable<readonly [string, number]>): void {
    this.known = new Map();
    for (const [k, ts] of entries) this.hold(k, ts);
    for (const [k, ts] of this.pending) this.hold(k, ts);
  }

  /** Forget held keys below `beforeMs`; returns how many were dropped. */
  prune(beforeMs: number): number {
    let n = 0;
    for (const [k, ts] of this.known) {
      if (ts < beforeMs) {
        this.known.delete(k);
        n++;
      }
    }
    return n;
  }

  /** Additions since the last call with a timestamp ≥ `minMs`, for the next commit. */
  takePending(minMs = Number.NEGATIVE_INFINITY): Array<[string, number]> {
    const out = this.pending.filter(([, ts]) => ts >= minMs);
    this.pending = [];
    return out;
  }

  /** Put additions back after a failed commit, so the next commit carries them. */
  restorePending(entries: Array<[string, number]>): void {
    this.pending = entries.concat(this.pending);
  }

  private hold(key: string, timestampMs: number): void {
    const held = this.known.get(key);
    if (held === undefined || timestampMs > held) this.known.set(key, timestampMs);
  }
}
