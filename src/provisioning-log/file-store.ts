/**
 * The one-shot commands' provisioning log: JSON lines in `<state.dir>/<tenant>/provisioning-log.jsonl`,
 * appended and fsync'd per batch. Ids are `<ms>-<seq>` like a Redis stream's, continuing from
 * the last line. Retention is applied by `trim()` (end of every apply): the file is rewritten
 * atomically when it holds records past the age or size bound.
 */
import { createReadStream } from 'node:fs';
import { mkdir, open, rename, stat, type FileHandle } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { readJsonFile, writeJsonFileAtomic } from '../state/atomic-file.ts';
import { compareIds, matches, type LogQuery } from './query.ts';
import type { NewRecord, ProvisioningRecord } from './record.ts';
import type { ProvisioningLogStore, Retention } from './store.ts';

export function provisioningLogPath(stateDir: string, tenant: string): string {
  return join(stateDir, tenant, 'provisioning-log.jsonl');
}

const TAIL_BYTES = 256 * 1024;
/** How much of the rewritten log is written at a time. */
const WRITE_CHUNK_CHARS = 256 * 1024;

/** A line's `time` in epoch ms; NaN when the line is torn or has none. */
function lineTime(line: string): number {
  try {
    const t = (JSON.parse(line) as { time?: unknown }).time;
    return typeof t === 'string' ? Date.parse(t) : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

export class FileProvisioningLogStore implements ProvisioningLogStore {
  readonly describe: string;
  readonly path: string;
  private readonly cursorPath: string;
  private last: { ms: number; seq: number } | undefined;
  /** The file ends in a line torn by a crash: the next append starts on a new line. */
  private torn = false;
  private readonly retention: Retention;
  private readonly now: () => number;

  constructor(stateDir: string, tenant: string, retention: Retention, now: () => number = Date.now) {
    this.retention = retention;
    this.now = now;
    this.path = provisioningLogPath(stateDir, tenant);
    this.cursorPath = join(dirname(this.path), 'provisioning-log.delivered.json');
    this.describe = `file ${this.path}`;
  }

  private nextId(): string {
    const ms = Math.max(this.now(), this.last?.ms ?? 0);
    const seq = this.last && this.last.ms === ms ? this.last.seq + 1 : 0;
    this.last = { ms, seq };
    return `${ms}-${seq}`;
  }

  /** The id of the last line, read from the file's tail. */
  private async lastId(): Promise<{ ms: number; seq: number } | undefined> {
    let fh: FileHandle;
    try {
      fh = await open(this.path, 'r');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw e;
    }
    try {
      const { size } = await fh.stat();
      const len = Math.min(size, TAIL_BYTES);
      const buf = Buffer.alloc(len);
      await fh.read(buf, 0, len, size - len);
      this.torn = len > 0 && buf[len - 1] !== 0x0a;
      const lines = buf
        .toString('utf8')
        .split('\n')
        .filter((l) => l.trim() !== '');
      for (let i = lines.length - 1; i >= 0; i--) {
        const m = /"id":"(\d+)-(\d+)"/.exec(lines[i]!);
        if (m) return { ms: Number(m[1]), seq: Number(m[2]) };
      }
      return undefined;
    } finally {
      await fh.close();
    }
  }

  async append(records: readonly NewRecord[]): Promise<void> {
    if (records.length === 0) return;
    if (this.last === undefined) this.last = await this.lastId();
    const text = (this.torn ? '\n' : '') + records.map((r) => `${JSON.stringify({ id: this.nextId(), ...r })}\n`).join('');
    await mkdir(dirname(this.path), { recursive: true });
    const fh = await open(this.path, 'a', 0o600);
    try {
      await fh.writeFile(text);
      await fh.sync();
      this.torn = false;
    } finally {
      await fh.close();
    }
  }

  /** Every non-empty line, oldest first, streamed (the file can hold hundreds of thousands). */
  private async *lines(): AsyncGenerator<string> {
    try {
      await stat(this.path);
    } catch {
      return;
    }
    const lines = createInterface({ input: createReadStream(this.path, 'utf8'), crlfDelay: Infinity });
    for await (const line of lines) if (line.trim() !== '') yield line;
  }

  /** Every record, oldest first (one pass over the file; a torn last line is skipped). */
  private async *records(): AsyncGenerator<ProvisioningRecord> {
    for await (const line of this.lines()) {
      try {
        yield JSON.parse(line) as ProvisioningRecord;
      } catch {
        // A line torn by a crash mid-append: the rest of the file is still read.
      }
    }
  }

  async query(q: LogQuery): Promise<ProvisioningRecord[]> {
    const hits: ProvisioningRecord[] = [];
    for await (const r of this.records()) {
      if (!matches(r, q)) continue;
      hits.push(r);
      if (hits.length > q.limit) hits.shift();
    }
    return hits.reverse();
  }

  async after(afterId: string | null, limit: number): Promise<ProvisioningRecord[]> {
    const out: ProvisioningRecord[] = [];
    for await (const r of this.records()) {
      if (afterId !== null && compareIds(r.id, afterId) <= 0) continue;
      out.push(r);
      if (out.length >= limit) break;
    }
    return out;
  }

  /**
   * Drops the oldest lines past the age or count bound by rewriting the file atomically, in two
   * streamed passes (count, then copy), so its memory does not grow with the log.
   */
  async trim(): Promise<void> {
    const minMs = this.now() - this.retention.maxAgeMs;
    let total = 0;
    let old = 0;
    for await (const line of this.lines()) {
      total++;
      // Lines are in time order: those before the first young one are old (a torn line counts as old).
      if (old === total - 1 && !(lineTime(line) >= minMs)) old++;
    }
    const drop = Math.max(old, total - this.retention.maxEntries);
    if (drop <= 0) return;
    const tmp = `${this.path}.${process.pid}.tmp`;
    const fh = await open(tmp, 'w', 0o600);
    try {
      let seen = 0;
      let chunk = '';
      for await (const line of this.lines()) {
        if (seen++ < drop) continue;
        chunk += `${line}\n`;
        if (chunk.length >= WRITE_CHUNK_CHARS) {
          await fh.writeFile(chunk);
          chunk = '';
        }
      }
      if (chunk !== '') await fh.writeFile(chunk);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, this.path);
  }

  async deliveredUpTo(): Promise<string | null> {
    return (await readJsonFile<{ id: string }>(this.cursorPath))?.id ?? null;
  }

  async setDeliveredUpTo(id: string): Promise<void> {
    await writeJsonFileAtomic(this.cursorPath, { id });
  }

  async close(): Promise<void> {}
}
