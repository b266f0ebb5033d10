/**
 * The keys already handled (delivered, or dead-lettered) whose timestamps are still inside
 * the overlap window: an event found here is not sent again. In-memory view of the state
 * store's set plus the additions not yet committed. Size is bounded by the events of one
 * overlap window (plus, for exports not in ascending time order, one export window).
 */

export class DedupeSet {
  private readonly keys = new Map<string, number>();
  /** Additions since the last commit, as two parallel arrays (no tuple per event). */
  private pendingKeys: string[] = [];
  private pendingTs: number[] = [];

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
    this.pendingKeys.push(key);
    this.pendingTs.push(timestampMs);
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
    const out: Array<[string, number]> = [];
    for (let i = 0; i < this.pendingKeys.length; i++) {
      const ts = this.pendingTs[i] as number;
      if (ts >= minMs) out.push([this.pendingKeys[i] as string, ts]);
    }
    this.pendingKeys = [];
    this.pendingTs = [];
    return out;
  }

  /** Put additions back after a failed commit, so the next commit carries them. */
  restorePending(entries: Array<[string, number]>): void {
    this.pendingKeys = entries.map(([k]) => k).concat(this.pendingKeys);
    this.pendingTs = entries.map(([, t]) => t).concat(this.pendingTs);
  }
}
