/**
 * The keys already handled (delivered, or dead-lettered) whose timestamps are still inside
 * the overlap window: an event found here is not sent again. In-memory view of the state
 * store's set plus the additions not yet committed. Size is bounded by the events of one
 * overlap window (plus, for exports not in ascending time order, one export window).
 *
 * Event keys are kept as a log in the order they were added; the key → time index that
 * lookups need is built on the first lookup and dropped again once lookups stop (a long
 * backfill in time order looks nothing up after its first overlap). In time order, pruning
 * drops from the front of the log. The largest event time held is known: an event after it
 * cannot be here. Keys of dead-lettered rows (`bad:…`, kept until past their request) are
 * held apart.
 */

/** Keys of dead-lettered CSV rows start with this (see WindowPass). */
export const BAD_ROW_KEY_PREFIX = 'bad:';
/** Dropped log entries are compacted away once there are this many and more than half. */
const COMPACT_AT = 4096;

export class DedupeSet {
  private keys: string[] = [];
  private times: number[] = [];
  /** Log entries before this index were pruned. */
  private head = 0;
  private index: Map<string, number> | undefined;
  private looked = false;
  private readonly badRows = new Map<string, number>();
  /** Largest event timestamp ever added (an upper bound: pruning does not lower it). */
  private max = Number.NEGATIVE_INFINITY;
  /** Event keys were added in non-decreasing time order (log order = time order). */
  private ordered = true;
  /** Additions since the last commit, as two parallel arrays (no tuple per event). */
  private pendingKeys: string[] = [];
  private pendingTs: number[] = [];

  constructor(entries: Iterable<readonly [string, number]> = []) {
    for (const [k, ts] of entries) this.set(k, ts);
  }

  /** Log entries held (a key added twice counts twice), plus dead-lettered rows. */
  get size(): number {
    return this.keys.length - this.head + this.badRows.size;
  }

  /** No event key with a later timestamp is held. */
  get maxEventTimestampMs(): number {
    return this.max;
  }

  has(key: string): boolean {
    if (key.startsWith(BAD_ROW_KEY_PREFIX)) return this.badRows.has(key);
    this.looked = true;
    return this.lookup().has(key);
  }

  add(key: string, timestampMs: number): void {
    this.set(key, timestampMs);
    this.pendingKeys.push(key);
    this.pendingTs.push(timestampMs);
  }

  /** Forget keys below `beforeMs`; returns how many log entries and rows were dropped. */
  prune(beforeMs: number): number {
    let n = 0;
    if (this.ordered) {
      while (this.head < this.keys.length && (this.times[this.head] as number) < beforeMs) {
        this.unindex(this.keys[this.head] as string, this.times[this.head] as number);
        this.head++;
        n++;
      }
      if (this.head >= COMPACT_AT && this.head * 2 > this.keys.length) this.compact(() => true);
    } else {
      const before = this.keys.length - this.head;
      this.compact((ts) => ts >= beforeMs);
      n = before - this.keys.length;
      this.index = undefined;
      this.ordered = this.times.every((t, i) => i === 0 || t >= (this.times[i - 1] as number));
    }
    for (const [k, ts] of this.badRows) {
      if (ts < beforeMs) {
        this.badRows.delete(k);
        n++;
      }
    }
    // No lookup since the last prune: stop keeping the index up to date.
    if (!this.looked) this.index = undefined;
    this.looked = false;
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

  private set(key: string, timestampMs: number): void {
    if (key.startsWith(BAD_ROW_KEY_PREFIX)) {
      this.badRows.set(key, timestampMs);
      return;
    }
    if (timestampMs < this.max) this.ordered = false;
    else this.max = timestampMs;
    this.keys.push(key);
    this.times.push(timestampMs);
    if (this.index) this.index.set(key, Math.max(timestampMs, this.index.get(key) ?? timestampMs));
  }

  private lookup(): Map<string, number> {
    if (!this.index) {
      const index = new Map<string, number>();
      for (let i = this.head; i < this.keys.length; i++) {
        const k = this.keys[i] as string;
        const ts = this.times[i] as number;
        index.set(k, Math.max(ts, index.get(k) ?? ts));
      }
      this.index = index;
    }
    return this.index;
  }

  /** A pruned entry leaves the index unless a later addition of the same key is still held. */
  private unindex(key: string, ts: number): void {
    if (this.index && this.index.get(key) === ts) this.index.delete(key);
  }

  /** Keeps the live entries whose time passes `keep`, in order. */
  private compact(keep: (ts: number) => boolean): void {
    const keys: string[] = [];
    const times: number[] = [];
    for (let i = this.head; i < this.keys.length; i++) {
      const ts = this.times[i] as number;
      if (keep(ts)) {
        keys.push(this.keys[i] as string);
        times.push(ts);
      }
    }
    this.keys = keys;
    this.times = times;
    this.head = 0;
  }
}
