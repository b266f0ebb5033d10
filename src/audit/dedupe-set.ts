/**
 * The keys already handled (delivered, or dead-lettered) whose timestamps are still inside
 * the overlap window: an event found here is not sent again. In-memory view of the state
 * store's set plus the additions not yet committed. Size is bounded by the events of one
 * overlap window (plus, for exports not in ascending time order, one export window).
 */

/** Keys of dead-lettered CSV rows start with this (see WindowPass). */
export const BAD_ROW_KEY_PREFIX = 'bad:';

export class DedupeSet {
  /** key → the largest timestamp it was added with (epoch ms). */
  private readonly keys = new Map<string, number>();
  /** Additions since the last commit. */
  private pending: Array<[string, number]> = [];

  constructor(entries: Iterable<readonly [string, number]> = []) {
    for (const [k, ts] of entries) this.set(k, ts);
  }

  get size(): number {
    return this.keys.size;
  }

  has(key: string): boolean {
    return this.keys.has(key);
  }

  add(key: string, timestampMs: number): void {
    this.set(key, timestampMs);
    this.pending.push([key, timestampMs]);
  }

  /** Forget keys below `beforeMs`; returns how many were dropped. */
  prune(beforeMs: number): number {
    let n = 0;
    for (const [k, ts] of this.keys) {
      if (ts < beforeMs) {
        this.keys.delete(k);
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

  private set(key: string, timestampMs: number): void {
    const held = this.keys.get(key);
    if (held === undefined || timestampMs > held) this.keys.set(key, timestampMs);
  }
}
