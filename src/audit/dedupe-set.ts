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
import { grownBuffer } from './grown-buffer.ts';

/** Keys of dead-lettered CSV rows start with this (see WindowPass). */
export const BAD_ROW_KEY_PREFIX = 'bad:';

export class DedupeSet {
  /** key → the largest timestamp it was stored with (epoch ms). */
  private known = new Map<string, number>();
  /** Delivered since the last commit, in delivery order. */
  private pending = new PendingKeys();

  constructor(entries: Iterable<readonly [string, number]> = []) {
    this.reload(entries);
  }

  /** Keys held for lookups (not counting the pending ones). */
  get size(): number {
    return this.known.size;
  }

  /** Keys delivered since the last commit. */
  get pendingCount(): number {
    return this.pending.size;
  }

  has(key: string): boolean {
    return this.known.size > 0 && this.known.has(key);
  }

  /** A key delivered (or dead-lettered): carried by the next commit. */
  add(key: string, timestampMs: number): void {
    this.pending.push(key, timestampMs);
  }

  /**
   * The store's keys again, before a window is retried: what earlier attempts committed, plus
   * what they delivered and did not commit (still pending).
   */
  reload(entries: Iterable<readonly [string, number]>): void {
    this.known = new Map();
    for (const [k, ts] of entries) this.hold(k, ts);
    for (const [k, ts] of this.pending.entries()) this.hold(k, ts);
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
    const out = this.pending.entries(minMs);
    this.pending.clear();
    return out;
  }

  /** Put additions back after a failed commit, so the next commit carries them. */
  restorePending(entries: Array<[string, number]>): void {
    const later = this.pending.entries();
    this.pending.clear();
    for (const [k, ts] of entries) this.pending.push(k, ts);
    for (const [k, ts] of later) this.pending.push(k, ts);
  }

  private hold(key: string, timestampMs: number): void {
    const held = this.known.get(key);
    if (held === undefined || timestampMs > held) this.known.set(key, timestampMs);
  }
}

/**
 * Keys awaiting a commit, as UTF-8 bytes with their end offsets and times in typed arrays:
 * outside the JavaScript heap until the commit reads them back. Held as strings, a
 * checkpoint's keys (5,000 by default) outlived two young-generation collections and were
 * promoted, ~136 MB per million events, and collecting them was ~10 % of the export's CPU
 * (bench:audit, docs/audit.md#performance).
 */
class PendingKeys {
  private bytes: Buffer = Buffer.allocUnsafeSlow(64 * 1024);
  private ends = new Uint32Array(1024);
  private times = new Float64Array(1024);
  private used = 0;
  private count = 0;
  /** Keys UTF-8 cannot carry (a lone surrogate), by position: kept as they are. */
  private unencodable = new Map<number, string>();

  push(key: string, timestampMs: number): void {
    if (!key.isWellFormed()) this.unencodable.set(this.count, key);
    const most = 3 * key.length; // UTF-8 bytes per UTF-16 unit, at most
    if (this.used + most > this.bytes.length) this.bytes = grownBuffer(this.bytes, this.used + most, this.used);
    if (this.count === this.ends.length) {
      this.ends = grownArray(this.ends, Uint32Array);
      this.times = grownArray(this.times, Float64Array);
    }
    this.used += this.bytes.write(key, this.used, 'utf8');
    this.ends[this.count] = this.used;
    this.times[this.count] = timestampMs;
    this.count++;
  }

  /** The keys with a time ≥ `minMs`, in the order they came. */
  entries(minMs = Number.NEGATIVE_INFINITY): Array<[string, number]> {
    const out: Array<[string, number]> = [];
    let start = 0;
    for (let i = 0; i < this.count; i++) {
      const end = this.ends[i] as number;
      const ts = this.times[i] as number;
      if (ts >= minMs) out.push([this.unencodable.get(i) ?? this.bytes.toString('utf8', start, end), ts]);
      start = end;
    }
    return out;
  }

  get size(): number {
    return this.count;
  }

  clear(): void {
    this.used = 0;
    this.count = 0;
    if (this.unencodable.size > 0) this.unencodable = new Map();
  }
}

function grownArray<T extends Uint32Array | Float64Array>(a: T, Kind: new (n: number) => T): T {
  const next = new Kind(2 * a.length);
  next.set(a);
  return next;
}
