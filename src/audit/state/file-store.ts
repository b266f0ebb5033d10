/**
 * The audit state in local files under `state.dir/<tenant>/audit/`:
 * - `state.json`: a snapshot (cursor, overlap keys as [key, time] pairs, columns, backfill),
 *   replaced atomically (version 2; the object of keys that version 1 wrote is still read);
 * - `state.journal`: one JSON line per commit since the snapshot, appended and fdatasync'd.
 * A commit is one durable append (its cost is the keys it adds, not the whole set); a torn
 * last line is a commit that was never acknowledged and is ignored. The journal is folded
 * into a new snapshot when a run starts and whenever it grows past `compactBytes`.
 * Replaying a line twice changes nothing (keys are a set, the cursor only moves forward;
 * digests are added, so each line carries a sequence number and the snapshot the last one it
 * holds), so a crash between writing the snapshot and removing the journal is harmless.
 */
import { createReadStream } from 'node:fs';
import { mkdir, readFile, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { ErrorCodes, SyncError } from '../../errors.ts';
import { writeFileAtomic } from '../../state/atomic-file.ts';
import { openAppend, type AppendFile } from '../../state/durable-append.ts';
import { applyDigestCommit, digestMapOf, digestStateOf, emptyDigestState, type DigestMap } from '../digest/digest-state.ts';
import { acquireFileLock, holdsFileLock, releaseFileLock } from './file-lock.ts';
import type { AuditState, AuditStateStore, CommitUpdate, DigestCommit, DigestState } from './store.ts';

interface Snapshot {
  /** 2: `dedupe` is an array of [key, time] pairs; 1 (read only): an object key → time. */
  version: 1 | 2;
  tenant: string;
  cursorMs: number | null;
  /** For humans reading the file; cursorMs is authoritative. */
  cursor: string | null;
  columns: string[] | null;
  backfill: AuditState['backfill'];
  updatedAtMs: number | null;
  /** Window digests (absent before they were recorded). */
  digests?: DigestState;
  /** Sequence number of the last journal line folded into this snapshot. */
  seq?: number;
  /** [key, timestamp (epoch ms)] pairs (version 1: an object key → timestamp). */
  dedupe: Array<[string, number]> | Record<string, number>;
}

/** One commit: cursor, added keys, prune bound, optional columns/backfill (null = cleared), wall time. */
interface JournalLine {
  c: number;
  a: Array<[string, number]>;
  p: number;
  u: number;
  col?: string[] | null;
  bf?: AuditState['backfill'];
  /** Window digests of this commit. */
  d?: DigestCommit;
  /** Sequence number (lines a snapshot already holds are skipped: digests are added). */
  n?: number;
}

interface Folded {
  cursorMs: number | null;
  dedupe: Map<string, number>;
  /**
   * While the lock is held: each commit since load() as the bytes of its journal line, with the
   * largest time of its keys (folded into `dedupe` only when a snapshot is written). As key
   * strings, one overlap window of them was promoted to V8's old generation commit after
   * commit: ~15 MB of a 1M-event export's peak RSS (bench:audit); as bytes, ~3 MB outside the heap.
   * `pairs` is the part of the line that lists the keys (`["k",t],…`): a snapshot copies it as
   * it is, so a compaction never turns the keys back into strings (which cost a ~20 MB spike of
   * V8's old generation at each compaction, and V8 keeps the freed pages: +6–10 MB of peak RSS
   * over a 10M-event export).
   */
  recent: Array<{ pairs: Buffer; maxTs: number }>;
  columns: string[] | null;
  backfill: AuditState['backfill'];
  updatedAtMs: number | null;
  digests: DigestMap;
  /** Sequence number of the last commit folded in. */
  seq: number;
  /** A journal was found (so a new snapshot is worth writing). */
  journaled: boolean;
  /** Prune bound of the last journal line. */
  pruneBeforeMs: number;
}

function prune(s: Folded): Folded {
  if (s.dedupe.size > 0) for (const [k, ts] of s.dedupe) if (ts < s.pruneBeforeMs) s.dedupe.delete(k);
  s.recent = s.recent.filter((r) => r.maxTs >= s.pruneBeforeMs);
  return s;
}

/** Every key held: `dedupe` with `recent` read back (a new map; `s` is left as it is). */
function allKeys(s: Folded): Map<string, number> {
  if (s.recent.length === 0) return s.dedupe;
  const keys = new Map(s.dedupe);
  for (const r of s.recent) {
    for (const [k, ts] of JSON.parse(`[${r.pairs.toString('utf8')}]`) as JournalLine['a']) if (ts >= s.pruneBeforeMs) keys.set(k, ts);
  }
  return keys;
}

const COMMA = Buffer.from(',');

/** Keys per piece of a journal line or snapshot: each piece's text stays small and short-lived. */
const KEYS_PER_PIECE = 1024;

/** How a journal line ends, after its keys. */
const JOURNAL_CLOSE = ']}\n';

/**
 * A JSON object as UTF-8 bytes whose last member is an array of `pairs`, encoded a slice at
 * a time: a commit or snapshot of tens of thousands of keys never becomes one multi-megabyte
 * string (V8 keeps those in its large-object space until a full GC). `close` ends the array
 * and the object; with '' the caller appends more elements first.
 */
function* piecewiseJson(rest: object, name: string, pairs: Array<[string, number]>, close: string): Generator<Buffer> {
  yield Buffer.from(`${JSON.stringify(rest).slice(0, -1)},"${name}":[`);
  for (let i = 0; i < pairs.length; i += KEYS_PER_PIECE) {
    const text = JSON.stringify(pairs.slice(i, i + KEYS_PER_PIECE));
    yield Buffer.from(i === 0 ? text.slice(1, -1) : `,${text.slice(1, -1)}`);
  }
  yield Buffer.from(close);
}

/** One journal line as UTF-8 bytes, and the part of it that lists the keys (`["k",t],…`). */
function journalBytes(line: JournalLine): { bytes: Buffer; pairs: Buffer } {
  const { a, ...rest } = line;
  const pieces = [...piecewiseJson(rest, 'a', a, JOURNAL_CLOSE)];
  const bytes = Buffer.concat(pieces);
  return { bytes, pairs: bytes.subarray((pieces[0] as Buffer).length, bytes.length - JOURNAL_CLOSE.length) };
}

export function auditStateDir(stateDir: string, tenant: string): string {
  return join(stateDir, tenant, 'audit');
}

/**
 * Folds one journal line in. Keys below the line's prune bound are dropped once, after the
 * last line (see prune()): bounds only grow (cursor − overlap), and where a smaller overlap
 * in a later config makes one shrink, keeping a few more keys only prevents duplicates.
 */
function apply(s: Folded, l: JournalLine, encoded?: { pairs: Buffer }): void {
  if (l.n !== undefined) {
    if (l.n <= s.seq) return;
    s.seq = l.n;
  }
  s.cursorMs = s.cursorMs === null ? l.c : Math.max(s.cursorMs, l.c);
  if (encoded === undefined) for (const [k, ts] of l.a) s.dedupe.set(k, ts);
  else if (l.a.length > 0) {
    const maxTs = l.a.reduce((m, [, ts]) => (ts > m ? ts : m), Number.NEGATIVE_INFINITY);
    s.recent.push({ pairs: encoded.pairs, maxTs });
  }
  s.pruneBeforeMs = l.p;
  if (l.col !== undefined) s.columns = l.col;
  if (l.bf !== undefined) s.backfill = l.bf;
  if (l.d !== undefined) applyDigestCommit(s.digests, l.d);
  s.updatedAtMs = l.u;
}

export class FileAuditStateStore implements AuditStateStore {
  readonly describe: string;
  private readonly dir: string;
  private readonly path: string;
  private readonly journal: string;
  private readonly lockPath: string;
  private readonly tenant: string;
  private readonly compactBytes: number;
  /** This instance holds the lock (another instance in the same process may not commit). */
  private locked = false;
  private journalBytes = 0;
  /** The journal, open for durable appends while the lock is held (opened by the first commit). */
  private journalFile: AppendFile | undefined;
  /** Where the journal's last complete line ends (bytes). */
  private journalEnd = 0;
  /**
   * The state as of the last load() or commit(), kept while the lock is held: a compaction
   * writes it out instead of reading the journal back (which would hold every journaled key
   * in memory at once, a spike of tens of MB on a long backfill).
   */
  private current: Folded | undefined;

  constructor(stateDir: string, tenant: string, opts: { compactBytes?: number } = {}) {
    this.dir = auditStateDir(stateDir, tenant);
    this.path = join(this.dir, 'state.json');
    this.journal = join(this.dir, 'state.journal');
    this.lockPath = join(this.dir, 'run.lock');
    this.tenant = tenant;
    this.compactBytes = opts.compactBytes ?? 32 * 1024 * 1024; // bytes
    this.describe = `file:${this.path}`;
  }

  async acquire(owner: string): Promise<void> {
    await acquireFileLock(this.lockPath, owner);
    this.locked = true;
  }

  async release(): Promise<void> {
    if (!this.locked) return;
    this.locked = false;
    this.current = undefined;
    await this.closeJournal();
    await releaseFileLock(this.lockPath);
  }

  /** Snapshot + journal. With the lock held, the journal is folded into a new snapshot. */
  async load(): Promise<AuditState> {
    const s = await this.fold();
    if (this.locked && s.journaled) await this.writeSnapshot(s);
    this.current = this.locked ? s : undefined;
    return {
      cursorMs: s.cursorMs,
      dedupe: [...allKeys(s)],
      columns: s.columns,
      backfill: s.backfill,
      updatedAtMs: s.updatedAtMs,
      digests: digestStateOf(s.digests),
    };
  }

  async commit(u: CommitUpdate): Promise<void> {
    if (!this.locked || !(await holdsFileLock(this.lockPath))) {
      throw new SyncError(
        ErrorCodes.CONFLICT,
        'fatal',
        `audit run lock ${this.lockPath} was lost (taken over by another run); stopping without committing`,
      );
    }
    const line: JournalLine = { c: u.cursorMs, a: u.added, p: u.pruneBeforeMs, u: u.nowMs };
    if (u.columns !== undefined) line.col = u.columns;
    if (u.backfill !== undefined) line.bf = u.backfill;
    if (u.digests !== undefined) line.d = u.digests;
    if (!this.current) this.current = await this.fold();
    line.n = this.current.seq + 1;
    const encoded = journalBytes(line);
    const { bytes } = encoded;
    if (!this.journalFile) {
      await mkdir(this.dir, { recursive: true });
      this.journalFile = await openAppend(this.journal, true);
      this.journalEnd = (await this.journalFile.handle.stat()).size;
    }
    try {
      this.journalEnd += await this.journalFile.append(bytes);
    } catch (e) {
      // Cut what part of the line was written, so the next commit's line does not follow a torn one.
      await this.journalFile.handle.truncate(this.journalEnd).catch(() => undefined);
      await this.closeJournal();
      throw e;
    }
    this.journalBytes += bytes.length;
    if (this.current) {
      apply(this.current, line, encoded);
      prune(this.current);
    }
    if (this.journalBytes >= this.compactBytes) await this.writeSnapshot(this.current ?? (await this.fold()));
  }

  async close(): Promise<void> {
    await this.release();
  }

  private async fold(): Promise<Folded> {
    const s: Folded = {
      cursorMs: null,
      dedupe: new Map(),
      recent: [],
      columns: null,
      backfill: null,
      updatedAtMs: null,
      digests: digestMapOf(emptyDigestState()),
      seq: 0,
      journaled: false,
      pruneBeforeMs: Number.NEGATIVE_INFINITY,
    };
    let text: string | undefined;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (e) {
      if ((e as { code?: string }).code !== 'ENOENT') throw e;
    }
    if (text !== undefined) {
      let snap: Snapshot;
      try {
        snap = JSON.parse(text) as Snapshot;
      } catch {
        throw new SyncError(
          ErrorCodes.CONFIG_INVALID,
          'fatal',
          `audit state ${this.path} is not valid JSON; restore it from a backup or delete it (and ${this.journal}) to start over from audit.backfill.from`,
        );
      }
      s.cursorMs = snap.cursorMs ?? null;
      const pairs = snap.dedupe ?? [];
      for (const [k, ts] of Array.isArray(pairs) ? pairs : Object.entries(pairs)) s.dedupe.set(k, ts);
      s.columns = snap.columns ?? null;
      s.backfill = snap.backfill ?? null;
      s.updatedAtMs = snap.updatedAtMs ?? null;
      if (snap.digests) s.digests = digestMapOf(snap.digests);
      s.seq = snap.seq ?? 0;
    }
    try {
      await stat(this.journal);
    } catch {
      return s;
    }
    s.journaled = true;
    for await (const raw of createInterface({ input: createReadStream(this.journal, { encoding: 'utf8' }), crlfDelay: Infinity })) {
      if (raw === '') continue;
      let line: JournalLine;
      try {
        line = JSON.parse(raw) as JournalLine;
      } catch {
        break; // a torn last line: that commit was never acknowledged
      }
      apply(s, line);
    }
    return prune(s);
  }

  private async closeJournal(): Promise<void> {
    const file = this.journalFile;
    this.journalFile = undefined;
    await file?.handle.close().catch(() => undefined);
  }

  private async writeSnapshot(s: Folded): Promise<void> {
    const rest: Omit<Snapshot, 'dedupe'> = {
      version: 2,
      tenant: this.tenant,
      cursorMs: s.cursorMs,
      cursor: s.cursorMs === null ? null : new Date(s.cursorMs).toISOString(),
      columns: s.columns,
      backfill: s.backfill,
      updatedAtMs: s.updatedAtMs,
      digests: digestStateOf(s.digests),
      seq: s.seq,
    };
    // Pieces of bytes outside the heap: the held commits' pairs are copied from their journal
    // lines, never read back into strings. Collected before the first await, so a commit made
    // meanwhile cannot change what this snapshot holds.
    // A held line may still carry a few keys below the prune bound (lines are dropped whole, by
    // their newest key): the next load prunes them, and a key kept longer only prevents a duplicate.
    const loaded = [...s.dedupe];
    const pieces = [...piecewiseJson(rest, 'dedupe', loaded, '')];
    let separate = loaded.length > 0;
    for (const r of s.recent) {
      if (separate) pieces.push(COMMA);
      pieces.push(r.pairs);
      separate = true;
    }
    pieces.push(Buffer.from(']}'));
    await writeFileAtomic(this.path, pieces);
    await this.closeJournal();
    await unlink(this.journal).catch((e: { code?: string }) => {
      if (e.code !== 'ENOENT') throw e;
    });
    this.journalBytes = 0;
  }
}
