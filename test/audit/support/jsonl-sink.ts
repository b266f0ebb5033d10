/**
 * A small but real sink for engine tests: appends one JSON line per event to a file and
 * acknowledges after the write. Deliberately NOT idempotent (no recentKeys), so only the
 * engine's own dedupe protects it from duplicates. It can be told to reject some events or
 * to fail (transiently, after "its own retries") from a given batch on.
 */
import { appendFile, mkdir, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { ErrorCodes, SyncError } from '../../../src/errors.ts';
import type { AuditEvent } from '../../../src/audit/event.ts';
import { repairTornLine } from '../../../src/audit/sinks/file/torn-line.ts';
import type { RejectedEvent, Sink, WriteResult } from '../../../src/audit/sinks/sink.ts';

export interface JsonlSinkOptions {
  reject?: (e: AuditEvent) => boolean;
  /** Throw a transient SyncError on the Nth write call (1-based) and every one after. */
  failFromWrite?: number;
  /** Wait this long in every write before answering (a slow destination), ms. */
  delayMs?: number;
}

export class JsonlSink implements Sink {
  readonly name: string;
  readonly type = 'jsonl-test';
  readonly idempotent = false;
  readonly path: string;
  writes = 0;
  opened = 0;
  closed = 0;
  private readonly opts: JsonlSinkOptions;

  constructor(name: string, path: string, opts: JsonlSinkOptions = {}) {
    this.name = name;
    this.path = path;
    this.opts = opts;
  }

  async open(): Promise<void> {
    this.opened++;
    await mkdir(dirname(this.path), { recursive: true });
    // A process killed inside an append leaves a torn last line (never acknowledged): cut it,
    // as any line-oriented destination would, so the next run's first line is not glued to it.
    await repairTornLine(this.path, false);
  }

  async write(events: AuditEvent[]): Promise<WriteResult> {
    this.writes++;
    if (this.opts.delayMs) await new Promise((resolve) => setTimeout(resolve, this.opts.delayMs));
    if (this.opts.failFromWrite !== undefined && this.writes >= this.opts.failFromWrite) {
      throw new SyncError(ErrorCodes.TRANSIENT, 'transient', `sink ${this.name}: destination unavailable (test)`);
    }
    const rejected: RejectedEvent[] = [];
    let text = '';
    for (const e of events) {
      if (this.opts.reject?.(e)) rejected.push({ event: e, code: 'test_rejected', reason: 'rejected by the test sink' });
      else text += `${JSON.stringify({ key: e.key, ts: e.timestampMs })}\n`;
    }
    if (text) await appendFile(this.path, text);
    return { delivered: events.length - rejected.length, rejected };
  }

  async close(): Promise<void> {
    this.closed++;
  }

  /** The keys written, in order (none when the file does not exist; a line that is not JSON throws). */
  async keys(): Promise<string[]> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (e) {
      if ((e as { code?: string }).code === 'ENOENT') return [];
      throw e;
    }
    return text
      .split('\n')
      .filter(Boolean)
      .map((l) => (JSON.parse(l) as { key: string }).key);
  }
}
