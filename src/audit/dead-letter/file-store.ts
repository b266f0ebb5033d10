/**
 * Dead letters as JSON lines, one file per sink under `state.dir/<tenant>/audit/dead-letter/`.
 * Appends are fsync'd. A replay renames the live file to `<sink>.replaying.jsonl` (new dead
 * letters keep going to a fresh live file), feeds it to the handler, collects what still
 * fails in `<sink>.returned.jsonl` and appends that back to the live file at the end. Files
 * left by a replay that died are picked up first by the next one (at-least-once).
 */
import { createReadStream } from 'node:fs';
import { mkdir, open, readdir, rename, stat, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import type { DeadLetter, DeadLetterStore, ReplayHandler } from './store.ts';

const LIVE = '.jsonl';
const REPLAYING = '.replaying.jsonl';
const RETURNED = '.returned.jsonl';

/** Append and fdatasync: resolves only when the bytes are on disk. */
async function appendDurable(path: string, data: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const fh = await open(path, 'a', 0o600);
  try {
    await fh.writeFile(data);
    await fh.datasync();
  } finally {
    await fh.close();
  }
}

function encode(entries: readonly DeadLetter[]): string {
  return entries.map((e) => `${JSON.stringify(e)}\n`).join('');
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

async function* readEntries(path: string): AsyncGenerator<DeadLetter> {
  const rl = createInterface({ input: createReadStream(path, { encoding: 'utf8' }), crlfDelay: Infinity });
  for await (const line of rl) {
    if (line.trim() === '') continue;
    try {
      yield JSON.parse(line) as DeadLetter;
    } catch {
      // A torn last line from a crash mid-append: the append was never acknowledged.
    }
  }
}

export class FileDeadLetterStore implements DeadLetterStore {
  readonly describe: string;
  private readonly dir: string;

  /** `dir` is the audit state directory (`state.dir/<tenant>/audit`). */
  constructor(auditDir: string) {
    this.dir = join(auditDir, 'dead-letter');
    this.describe = `file:${this.dir}`;
  }

  private file(sink: string, suffix: string): string {
    return join(this.dir, `${sink}${suffix}`);
  }

  async add(entries: readonly DeadLetter[]): Promise<void> {
    const bySink = new Map<string, DeadLetter[]>();
    for (const e of entries) {
      const list = bySink.get(e.sink) ?? [];
      list.push(e);
      bySink.set(e.sink, list);
    }
    for (const [sink, list] of bySink) await appendDurable(this.file(sink, LIVE), encode(list));
  }

  async counts(): Promise<Record<string, number>> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch {
      return {};
    }
    const out: Record<string, number> = {};
    for (const name of names) {
      if (!name.endsWith(LIVE)) continue;
      const suffix = [REPLAYING, RETURNED].find((x) => name.endsWith(x)) ?? LIVE;
      const sink = name.slice(0, -suffix.length);
      let n = 0;
      for await (const _ of readEntries(join(this.dir, name))) n++;
      out[sink] = (out[sink] ?? 0) + n;
    }
    return out;
  }

  async peek(sink: string, limit: number): Promise<DeadLetter[]> {
    const out: DeadLetter[] = [];
    for (const suffix of [REPLAYING, RETURNED, LIVE]) {
      const path = this.file(sink, suffix);
      if (!(await exists(path))) continue;
      for await (const e of readEntries(path)) {
        if (out.length >= limit) return out;
        out.push(e);
      }
    }
    return out;
  }

  async drain(sink: string, batchSize: number, handler: ReplayHandler): Promise<{ taken: number; returned: number }> {
    const replaying = this.file(sink, REPLAYING);
    const live = this.file(sink, LIVE);
    const back = this.file(sink, RETURNED);
    let taken = 0;
    let returned = 0;
    const process = async (path: string): Promise<void> => {
      let batch: DeadLetter[] = [];
      const flush = async (): Promise<void> => {
        if (batch.length === 0) return;
        const current = batch;
        batch = [];
        taken += current.length;
        const failed = await handler(current);
        if (failed.length > 0) await appendDurable(back, encode(failed));
        returned += failed.length;
      };
      for await (const e of readEntries(path)) {
        batch.push(e);
        if (batch.length >= batchSize) await flush();
      }
      await flush();
      await unlink(path);
    };
    await this.restoreReturned(back, live);
    // A leftover of a replay that died first, then the live file (renamed, so new dead
    // letters written meanwhile go to a fresh live file and are left for the next replay).
    if (await exists(replaying)) await process(replaying);
    if (await exists(live)) {
      await rename(live, replaying);
      await process(replaying);
    }
    await this.restoreReturned(back, live);
    return { taken, returned };
  }

  /** Entries that failed again go back to the live file once the replay is over. */
  private async restoreReturned(back: string, live: string): Promise<void> {
    if (!(await exists(back))) return;
    const entries: DeadLetter[] = [];
    for await (const e of readEntries(back)) {
      entries.push(e);
      if (entries.length >= 1000) await appendDurable(live, encode(entries.splice(0)));
    }
    if (entries.length > 0) await appendDurable(live, encode(entries));
    await unlink(back);
  }

  async close(): Promise<void> {}
}
