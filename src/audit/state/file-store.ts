/**
 * The audit state as one JSON file under `state.dir/<tenant>/audit/state.json`, rewritten
 * atomically on every commit (temp + fsync + rename). Its size is bounded by the overlap
 * window's keys, so a rewrite stays cheap.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ErrorCodes, SyncError } from '../../platform/errors.ts';
import { writeJsonFileAtomic } from '../../state/atomic-file.ts';
import { acquireFileLock, holdsFileLock, releaseFileLock } from './file-lock.ts';
import { EMPTY_STATE, type AuditState, type AuditStateStore, type CommitUpdate } from './store.ts';

interface StateFile {
  version: 1;
  tenant: string;
  cursorMs: number | null;
  /** For humans reading the file; cursorMs is authoritative. */
  cursor: string | null;
  columns: string[] | null;
  backfill: AuditState['backfill'];
  updatedAtMs: number | null;
  /** key → timestamp (epoch ms). */
  dedupe: Record<string, number>;
}

export function auditStateDir(stateDir: string, tenant: string): string {
  return join(stateDir, tenant, 'audit');
}

export class FileAuditStateStore implements AuditStateStore {
  readonly describe: string;
  private readonly path: string;
  private readonly lockPath: string;
  private readonly tenant: string;
  private state: AuditState | undefined;
  /** This instance holds the lock (another instance in the same process may not commit). */
  private locked = false;
  private readonly dedupe = new Map<string, number>();

  constructor(stateDir: string, tenant: string) {
    const dir = auditStateDir(stateDir, tenant);
    this.path = join(dir, 'state.json');
    this.lockPath = join(dir, 'run.lock');
    this.tenant = tenant;
    this.describe = `file:${this.path}`;
  }

  async acquire(owner: string): Promise<void> {
    await acquireFileLock(this.lockPath, owner);
    this.locked = true;
  }

  async release(): Promise<void> {
    if (!this.locked) return;
    this.locked = false;
    await releaseFileLock(this.lockPath);
  }

  async load(): Promise<AuditState> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (e) {
      if ((e as { code?: string }).code !== 'ENOENT') throw e;
      this.state = { ...EMPTY_STATE, dedupe: [] };
      this.dedupe.clear();
      return this.state;
    }
    let file: StateFile;
    try {
      file = JSON.parse(text) as StateFile;
    } catch {
      throw new SyncError(ErrorCodes.CONFIG_INVALID, 'fatal', `audit state ${this.path} is not valid JSON; restore it from a backup or delete it to start over (events would be re-exported from audit.backfill.from)`);
    }
    this.dedupe.clear();
    for (const [k, ts] of Object.entries(file.dedupe ?? {})) this.dedupe.set(k, ts);
    this.state = {
      cursorMs: file.cursorMs ?? null,
      dedupe: [...this.dedupe],
      columns: file.columns ?? null,
      backfill: file.backfill ?? null,
      updatedAtMs: file.updatedAtMs ?? null,
    };
    return this.state;
  }

  async commit(u: CommitUpdate): Promise<void> {
    if (!this.locked || !holdsFileLock(this.lockPath)) throw new SyncError(ErrorCodes.CONFLICT, 'fatal', `audit state commit without the run lock (${this.lockPath})`);
    const prev = this.state ?? (await this.load());
    for (const [k, ts] of u.added) this.dedupe.set(k, ts);
    for (const [k, ts] of this.dedupe) if (ts < u.pruneBeforeMs) this.dedupe.delete(k);
    const cursorMs = prev.cursorMs === null ? u.cursorMs : Math.max(prev.cursorMs, u.cursorMs);
    const next: AuditState = {
      cursorMs,
      dedupe: [],
      columns: u.columns === undefined ? prev.columns : u.columns,
      backfill: u.backfill === undefined ? prev.backfill : u.backfill,
      updatedAtMs: u.nowMs,
    };
    const file: StateFile = {
      version: 1,
      tenant: this.tenant,
      cursorMs,
      cursor: new Date(cursorMs).toISOString(),
      columns: next.columns,
      backfill: next.backfill,
      updatedAtMs: u.nowMs,
      dedupe: Object.fromEntries(this.dedupe),
    };
    await writeJsonFileAtomic(this.path, file);
    this.state = next;
  }

  async close(): Promise<void> {
    await this.release();
  }
}
