/**
 * Change detection for a source kept in one file (the YAML/JSON directory, the CSV export):
 * poll the file's metadata, re-read it when it changed, and diff against the previous read
 * (diff.ts). The cursor is the file's identity (inode), size, mtime and SHA-256 of its bytes.
 *
 * - Metadata equal to the cursor's: an empty delta without opening the file (no read, no parse).
 *   Only trusted when the cursor's mtime was already older than SETTLED_MS when it was taken
 *   (the "racy timestamp" rule): a write within the same clock tick as the stat could
 *   otherwise keep mtime and size and go unseen.
 * - Metadata differs but the bytes hash the same (a `touch`): an empty delta, a fresh cursor.
 * - Bytes differ: the file is parsed once, through the same open handle it was hashed from,
 *   so an atomic replace (rename over the path) between the two cannot mix two versions.
 *   The delta is the diff against the previous read kept in memory for that cursor; with
 *   none (a restart, another cursor) the answer is a full read.
 */
import { createHash } from 'node:crypto';
import { open, stat, type FileHandle } from 'node:fs/promises';
import type { DesiredState } from '../../identity/model.ts';
import { SourceError } from '../../errors.ts';
import { emptyDelta, type ChangeMechanism, type ChangeSource, type SourceChanges } from '../changes.ts';
import { diffDesired } from '../diff.ts';

/** A file modified less than this before its stat may still change within the same mtime tick. */
const SETTLED_MS = 2_000;

export const FILE_CHANGE_MECHANISM: ChangeMechanism = {
  name: 'file-poll',
  // A stat per poll; a parse only when the bytes changed.
  pollIntervalMs: 5_000,
  blindSpots: [
    'a rewrite that keeps the inode, the size and the mtime (the mtime set back on purpose, e.g. touch -r)',
    'the change time is the file mtime, not when each entry changed',
  ],
};

interface Cursor {
  v: 1;
  ino: number;
  size: number;
  mtimeMs: number;
  sha256: string;
  /** The mtime was older than SETTLED_MS when the cursor was taken: metadata alone can be trusted. */
  settled: boolean;
}

/** Parses the file from an open handle (read from position 0). */
export type ParseFile = (handle: FileHandle, signal?: AbortSignal) => Promise<DesiredState>;

export class FileChangeTracker {
  /** How many times the file was parsed by changes() (reported in stats and tests). */
  parses = 0;
  private last: { sha256: string; state: DesiredState } | undefined;

  private readonly path: string;
  private readonly describe: string;
  private readonly parse: ParseFile;

  constructor(path: string, describe: string, parse: ParseFile) {
    this.path = path;
    this.describe = describe;
    this.parse = parse;
  }

  async changes(raw: string | undefined, signal?: AbortSignal): Promise<SourceChanges> {
    const cursor = raw === undefined ? undefined : decodeCursor(raw);
    if (cursor?.settled) {
      const s = await this.stat(signal);
      if (s.ino === cursor.ino && s.size === cursor.size && s.mtimeMs === cursor.mtimeMs) return emptyDelta(raw as string);
    }
    let handle: FileHandle;
    try {
      handle = await open(this.path, 'r');
    } catch (e) {
      throw this.unreadable(e);
    }
    try {
      const s = await handle.stat();
      const now = Date.now();
      const sha256 = await hashOf(handle, signal);
      const next: Cursor = { v: 1, ino: s.ino, size: s.size, mtimeMs: s.mtimeMs, sha256, settled: now - s.mtimeMs > SETTLED_MS };
      const encoded = JSON.stringify(next);
      if (cursor !== undefined && cursor.sha256 === sha256) return emptyDelta(encoded);
      const state = await this.parse(handle, signal);
      this.parses++;
      const prev = this.last;
      this.last = { sha256, state };
      if (raw === undefined) return { kind: 'full', reason: 'no cursor', state, cursor: encoded };
      if (cursor === undefined)
        return { kind: 'full', reason: 'cursor expired', detail: 'the cursor is not a file cursor', state, cursor: encoded };
      if (prev === undefined || prev.sha256 !== cursor.sha256)
        return {
          kind: 'full',
          reason: 'cursor expired',
          detail: 'the previous read of the file is not in memory (a restart): nothing to compare with',
          state,
          cursor: encoded,
        };
      return diffDesired(prev.state, state, { cursor: encoded, changedAtMs: Math.round(s.mtimeMs) });
    } finally {
      await handle.close();
    }
  }

  private async stat(signal?: AbortSignal): Promise<{ ino: number; size: number; mtimeMs: number }> {
    signal?.throwIfAborted();
    try {
      return await stat(this.path);
    } catch (e) {
      throw this.unreadable(e);
    }
  }

  private unreadable(e: unknown): SourceError {
    const code = (e as { code?: string }).code ?? (e instanceof Error ? e.message : 'unknown error');
    return new SourceError(`${this.describe}: cannot read ${this.path} (${code === 'ENOENT' ? 'no such file' : code})`, { cause: e });
  }
}

/**
 * A source kept in one file: `read()` reads it whole, `changes()` asks a tracker that re-reads
 * it through the same `readFrom` when it changed.
 */
export abstract class FileBackedSource implements ChangeSource {
  readonly describe: string;
  /** Absolute path of the file. */
  readonly path: string;
  /** Re-reads the file when it changed and diffs against the previous read. */
  readonly tracker: FileChangeTracker;

  constructor(path: string, describe: string) {
    this.path = path;
    this.describe = describe;
    this.tracker = new FileChangeTracker(path, describe, (handle, signal) => this.readFrom(handle, signal));
  }

  async read(signal?: AbortSignal): Promise<DesiredState> {
    return await this.readFrom(undefined, signal);
  }

  changeMechanism(): ChangeMechanism {
    return FILE_CHANGE_MECHANISM;
  }

  /** What changed in the file since `cursor`: nothing (a stat), a diff against the previous read, or a full read. */
  async changes(cursor: string | undefined, signal?: AbortSignal): Promise<SourceChanges> {
    return await this.tracker.changes(cursor, signal);
  }

  abstract check(signal?: AbortSignal): Promise<string>;

  /** The file at the path, or through a handle already open on it (read from its start). */
  protected abstract readFrom(handle: FileHandle | undefined, signal?: AbortSignal): Promise<DesiredState>;
}

/** SHA-256 of the whole file, read by position (the handle's own position stays at 0). */
async function hashOf(handle: FileHandle, signal?: AbortSignal): Promise<string> {
  const hash = createHash('sha256');
  const buf = Buffer.allocUnsafe(1 << 20);
  for (let pos = 0; ; ) {
    signal?.throwIfAborted();
    const { bytesRead } = await handle.read(buf, 0, buf.length, pos);
    if (bytesRead === 0) break;
    hash.update(buf.subarray(0, bytesRead));
    pos += bytesRead;
  }
  return hash.digest('hex');
}

/** An unknown or damaged cursor is not an error: the answer is a full read with a fresh one. */
function decodeCursor(raw: string): Cursor | undefined {
  let c: unknown;
  try {
    c = JSON.parse(raw);
  } catch {
    return undefined;
  }
  const o = c as Partial<Cursor> | null;
  if (
    o === null ||
    typeof o !== 'object' ||
    o.v !== 1 ||
    typeof o.ino !== 'number' ||
    typeof o.size !== 'number' ||
    typeof o.mtimeMs !== 'number' ||
    typeof o.sha256 !== 'string' ||
    typeof o.settled !== 'boolean'
  )
    return undefined;
  return o as Cursor;
}
