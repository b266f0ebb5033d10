/**
 * The keys already handled (delivered, or dead-lettered) whose timestamps are still inside
 * the overlap window: an event found here is not sent again. In-memory view of the state
 * store's set plus the additions not yet committed. Size is bounded by the events of one
 * overlap window (plus, for exports not in ascending time order, one export window).
 */

export class DedupeSet {
  private readonly keys = new Map<string, number>();
  private pending: Array<[string, number]> = [];

  constructor(entries: Iterable<readonly [string, number]> = []) {
    for (const [k, ts] of entries) this.keys.set(k, ts);
  }

  get size(): number {
    return this.keys.size;
  }

  has(key: string): boolean {
    return this.keys.has(key);
  }

  add(key: string, timestampMs: number): void {
    this.keys.set(key, timestampMs);
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

  /** Additions since the last call, for the next commit. */
  takePending(): Array<[string, number]> {
    const out = this.pending;
    this.pending = [];
    return out;
  }

  /** Put additions back after a failed commit, so the next commit carries them. */
  restorePending(entries: Array<[string, number]>): void {
    this.pending = entries.concat(this.pending);
  }
}
