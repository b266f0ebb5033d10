/**
 * NDJSON file sink. Appends durably (O_DSYNC, or write + fdatasync: state/durable-append.ts),
 * and only then acknowledges. Rotates
 * by size and by time bucket (renamed with the UTC rotation time), keeps `maxFiles`.
 * Key-aware resume makes it idempotent: `open()` cuts a torn last line and `recentKeys`
 * tells the engine which events already made it to disk before a crash.
 */
import { mkdir, open, rename, stat } from 'node:fs/promises';
import { openAppend, type AppendFile } from '../../../state/durable-append.ts';
import type { AuditEvent } from '../../event.ts';
import { ErrorCodes, SyncError, errorCodeOf } from '../../../errors.ts';
import type { SinkContext } from '../context.ts';
import { SinkInstrument } from '../instrument.ts';
import { resolvePath } from '../secrets.ts';
import { writeLocally } from '../local-write.ts';
import type { Sink, WriteResult } from '../sink.ts';
import type { FileSinkConfig } from './config.ts';
import { LineBuffer } from './line-buffer.ts';
import { scanRecentKeys } from './recent-keys.ts';
import { applyRetention, bucketStart, naming, rotatedName, type FileNaming } from './rotation.ts';
import { repairTornLine } from './torn-line.ts';

export class FileSink implements Sink {
  readonly name: string;
  readonly type = 'file';
  readonly idempotent = true;
  readonly path: string;
  private readonly config: FileSinkConfig;
  private readonly naming: FileNaming;
  private readonly now: () => number;
  private readonly instrument: SinkInstrument;
  private readonly ctx: SinkContext;
  private file: AppendFile | undefined;
  private size = 0;
  /** Time bucket the current file belongs to (time rotation). */
  private bucket = 0;
  /** A write failed mid-way: the file may end in a partial line to cut before appending. */
  private dirty = false;
  private closed = false;
  /** Lines are encoded here; one write() at a time (the engine has one batch in flight). */
  private readonly lines = new LineBuffer();

  constructor(config: FileSinkConfig, ctx: SinkContext) {
    this.name = config.name;
    this.config = config;
    this.ctx = ctx;
    this.path = resolvePath(ctx.configDir, config.path);
    this.naming = naming(this.path);
    this.now = ctx.now ?? Date.now;
    this.instrument = new SinkInstrument(config.name, this.type, ctx);
  }

  async open(): Promise<void> {
    await mkdir(this.naming.dir, { recursive: true });
    const cut = await repairTornLine(this.path, this.config.fsync);
    if (cut > 0) this.ctx.logger?.warn({ sink: this.name, bytes: cut }, 'file sink: cut a torn last line left by an interrupted write');
    await this.openCurrent();
  }

  async write(events: AuditEvent[], signal?: AbortSignal): Promise<WriteResult> {
    if (this.closed || !this.file)
      throw new SyncError(ErrorCodes.CONFIG_INVALID, 'fatal', `sink ${this.name}: write before open() or after close()`);
    return writeLocally(
      this.lines.chunks(events, this.config.batch),
      {
        instrument: this.instrument,
        write: async (chunk) => {
          try {
            await this.appendDurably(chunk.bytes, chunk.sizes);
          } catch (e) {
            this.dirty = true;
            throw e;
          }
        },
        failure: (e) => `sink ${this.name}: cannot write ${this.path} (${errorCodeOf(e) ?? (e as Error).message})`,
      },
      signal,
    );
  }

  async recentKeys(sinceMs: number): Promise<Set<string>> {
    const res = await scanRecentKeys(this.path, this.naming, sinceMs);
    if (res.unreadable > 0)
      this.ctx.logger?.warn({ sink: this.name, lines: res.unreadable }, 'file sink: lines without _key/_ts ignored while resuming');
    return res.keys;
  }

  async close(): Promise<void> {
    this.closed = true;
    const fh = this.file?.handle;
    this.file = undefined;
    if (!fh) return;
    await fh.close(); // with fsync, every append is already on disk
  }

  /** Writes the lines durably (rotating between them when due): the ack point. */
  private async appendDurably(bytes: Buffer, sizes: number[]): Promise<void> {
    if (this.dirty) {
      await this.file?.handle.close().catch(() => undefined);
      this.file = undefined;
      await repairTornLine(this.path, this.config.fsync);
      await this.openCurrent();
      this.dirty = false;
    }
    let start = 0;
    let end = 0;
    for (const size of sizes) {
      if (this.rotationDue(end - start, size)) {
        await this.flush(bytes.subarray(start, end));
        start = end;
        await this.rotate();
      }
      end += size;
    }
    await this.flush(bytes.subarray(start, end));
  }

  /** `pending` bytes are already destined for the current file; `line` is the next one. */
  private rotationDue(pending: number, line: number): boolean {
    const used = this.size + pending;
    if (used === 0) return false; // never rotate an empty file, even for an oversized line
    const { rotateMaxBytes, rotateEveryMinutes } = this.config;
    if (rotateMaxBytes > 0 && used + line > rotateMaxBytes) return true;
    return rotateEveryMinutes > 0 && bucketStart(this.now(), rotateEveryMinutes) !== this.bucket;
  }

  private async flush(buf: Buffer): Promise<void> {
    this.size += await this.file!.append(buf);
  }

  private async rotate(): Promise<void> {
    const fh = this.file!.handle;
    await fh.close(); // with fsync, every append is already on disk
    this.file = undefined;
    const at = this.now();
    let target = rotatedName(this.naming, at, 0);
    for (let seq = 1; await exists(target); seq++) target = rotatedName(this.naming, at, seq);
    await rename(this.path, target);
    await this.openCurrent();
    const deleted = await applyRetention(this.naming, this.config.maxFiles);
    this.ctx.logger?.info({ sink: this.name, rotatedTo: target, deleted: deleted.length }, 'file sink rotated');
  }

  private async openCurrent(): Promise<void> {
    const existed = await exists(this.path);
    this.file = await openAppend(this.path, this.config.fsync, this.config.mode);
    const st = await this.file.handle.stat();
    this.size = st.size;
    // An existing file belongs to the bucket of its last write; a new one to the current bucket.
    const ref = st.size > 0 ? st.mtimeMs : this.now();
    this.bucket = this.config.rotateEveryMinutes > 0 ? bucketStart(ref, this.config.rotateEveryMinutes) : 0;
    if (!existed && this.config.fsync) await syncDir(this.naming.dir);
  }
}

async function exists(p: string): Promise<boolean> {
  try {
    await stat(p);
    return true;
  } catch (e) {
    if ((e as { code?: unknown }).code === 'ENOENT') return false;
    throw e;
  }
}

/** Makes a create/rename durable: the directory entry is data too. */
async function syncDir(dir: string): Promise<void> {
  const fh = await open(dir, 'r');
  try {
    await fh.sync();
  } catch {
    // Some filesystems refuse fsync on a directory; the file data itself is synced.
  } finally {
    await fh.close();
  }
}
