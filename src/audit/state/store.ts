/**
 * Where the export's progress lives, per tenant: the cursor (high-water mark), the keys of
 * the events delivered inside the overlap window, the last header seen (schema drift) and
 * the backfill progress. Two implementations with the same semantics: a local JSON file
 * (one-shot CLI) and Redis (daemon). A commit is atomic: cursor and keys move together.
 */
import type { WindowDigest } from '../digest/window-digest.ts';

export interface BackfillProgress {
  /** Start of the range being exported, epoch ms. */
  fromMs: number;
  /** End of the range as planned by the latest run, epoch ms. */
  toMs: number;
  startedAtMs: number;
}

/**
 * Per-window digests of the handled events (docs/audit.md#verify): what `audit verify`
 * compares a re-export with. Kept for `audit.verify.retentionDays`.
 */
export interface DigestState {
  /** Grid the digests were recorded on (`windowMinutes` in ms); null before the first. */
  windowMs: number | null;
  /** Digests cover every event handled at or after this time (earlier windows are not compared). */
  sinceMs: number | null;
  /** By window start, ascending. */
  windows: WindowDigest[];
}

export interface DigestCommit {
  windowMs: number;
  /** Drop every stored digest first (first digest commit, or a new grid) and start at `sinceMs`. */
  reset?: { sinceMs: number };
  /** Added to the stored digests: the events handled since the last commit. */
  add: WindowDigest[];
  /** Digests of windows starting before this are forgotten; `sinceMs` moves up to it. */
  pruneBeforeMs: number;
}

export interface AuditState {
  /** Every event with a timestamp below this was delivered (late arrivals aside: see the overlap). Null before the first commit. */
  cursorMs: number | null;
  /** Delivered (or dead-lettered) keys with their timestamps, ts ≥ cursor − overlap. */
  dedupe: Array<[key: string, timestampMs: number]>;
  /** Header of the last export read, to count columns that appear or disappear. */
  columns: string[] | null;
  backfill: BackfillProgress | null;
  /** Wall-clock time of the last commit, epoch ms. */
  updatedAtMs: number | null;
  digests: DigestState;
}

export interface CommitUpdate {
  /** The store keeps the larger of this and the stored cursor: a cursor never moves back. */
  cursorMs: number;
  /** Keys delivered since the previous commit. */
  added: Array<[key: string, timestampMs: number]>;
  /** Keys with a timestamp below this are forgotten (they can no longer be re-exported). */
  pruneBeforeMs: number;
  columns?: string[] | null;
  /** `null` clears a finished backfill; undefined leaves it unchanged. */
  backfill?: BackfillProgress | null;
  nowMs: number;
  /** Window digests, committed atomically with the cursor and the keys. */
  digests?: DigestCommit;
}

export interface AuditStateStore {
  /** For logs and `audit status`, e.g. `file:/var/lib/scim-audit-sync/acme/audit/state.json`. */
  readonly describe: string;
  /**
   * Take the tenant's run lease (one export at a time per tenant, across processes). Throws
   * a `conflict` SyncError when another live run holds it. Commits require the lease.
   */
  acquire(owner: string): Promise<void>;
  release(): Promise<void>;
  load(): Promise<AuditState>;
  commit(update: CommitUpdate): Promise<void>;
  close(): Promise<void>;
}
