/**
 * The run lock of one-shot runs on a state directory, so two runs cannot interleave commits.
 *
 * - The lock file appears complete or not at all: it is written to a private temp file and
 *   hard-linked into place (`link` fails when the lock exists). A lock file that cannot be
 *   read is another run's, unless it has not changed for `staleAfterMs` (a crash of an older
 *   version between create and write).
 * - A lock left by a killed process is taken over: same host and its pid is gone (or is us, as
 *   after a container restart), or another host's lock whose time is older than `staleAfterMs`.
 *   The holder refreshes that time every third of it, so a long run keeps its lock.
 * - Each lock carries a random token; `holdsFileLock` checks the file still has ours, and the
 *   state store refuses to commit once another run has taken the lock over. That check runs
 *   before every commit, so it is one stat(): the file we placed is known by its device,
 *   inode and ctime (any replacement or rewrite changes one of them); only when they differ
 *   is the content read for the token.
 */
import { randomUUID } from 'node:crypto';
import { link, mkdir, open, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { dirname } from 'node:path';
import { ErrorCodes, SyncError } from '../../errors.ts';

interface LockInfo {
  pid: number;
  host: string;
  owner: string;
  token: string;
  atMs: number;
}

export interface FileLockOptions {
  /** Another host's lock older than this is stale, ms (default 10 minutes). */
  staleAfterMs?: number;
  /** This host's name as written in the lock (default os.hostname(); a test seam). */
  host?: string;
}

interface Held {
  info: LockInfo;
  timer: NodeJS.Timeout;
  /** Device, inode and ctime of the lock file as we last verified it carries our token. */
  identity: string | undefined;
}

/** Locks held by this process, so a second acquire in the same process is refused too. */
const held = new Map<string, Held>();

const DEFAULT_STALE_MS = 10 * 60_000;

function alive(pid: number): boolean {
  if (pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as { code?: string }).code === 'EPERM';
  }
}

/** The lock as it stands: its content (undefined when unreadable) and when it last changed; undefined when gone. */
async function readLock(path: string): Promise<{ info: LockInfo | undefined; mtimeMs: number } | undefined> {
  try {
    const [text, st] = await Promise.all([readFile(path, 'utf8'), stat(path)]);
    let info: LockInfo | undefined;
    try {
      info = JSON.parse(text) as LockInfo;
    } catch {
      info = undefined;
    }
    return { info, mtimeMs: st.mtimeMs };
  } catch (e) {
    if ((e as { code?: string }).code === 'ENOENT') return undefined;
    throw e;
  }
}

/** What stat() says of a file that changes whenever it is replaced or rewritten. */
function identityOf(st: { dev: bigint; ino: bigint; ctimeNs: bigint }): string {
  return `${st.dev}:${st.ino}:${st.ctimeNs}`;
}

/** The lock file's identity if it carries `token` (read and stat'ed through one descriptor), else undefined. */
async function verifiedIdentity(path: string, token: string): Promise<string | undefined> {
  let fh;
  try {
    fh = await open(path, 'r');
  } catch (e) {
    if ((e as { code?: string }).code === 'ENOENT') return undefined;
    throw e;
  }
  try {
    const st = await fh.stat({ bigint: true });
    const info = JSON.parse(await fh.readFile('utf8')) as Partial<LockInfo>;
    return info.token === token ? identityOf(st) : undefined;
  } catch {
    return undefined;
  } finally {
    await fh.close();
  }
}

/** Writes `info` to a private temp file, then `place`s it (link: only if absent; rename: replace). */
async function writeLock(path: string, info: LockInfo, place: 'link' | 'rename'): Promise<void> {
  const tmp = `${path}.${info.token}.${Date.now()}.tmp`;
  await writeFile(tmp, JSON.stringify(info), { mode: 0o600, flag: 'wx' });
  try {
    if (place === 'link') await link(tmp, path);
    else await rename(tmp, path);
  } finally {
    // Gone after a rename; the second name of a link (or a failed attempt's file) otherwise.
    await unlink(tmp).catch(() => undefined);
  }
}

export async function acquireFileLock(path: string, owner: string, opts: FileLockOptions = {}): Promise<void> {
  if (held.has(path))
    throw new SyncError(ErrorCodes.CONFLICT, 'conflict', `another audit export is already running in this process (${path})`);
  const staleAfterMs = opts.staleAfterMs ?? DEFAULT_STALE_MS;
  const host = opts.host ?? hostname();
  await mkdir(dirname(path), { recursive: true });
  for (let attempt = 0; attempt < 3; attempt++) {
    const info: LockInfo = { pid: process.pid, host, owner, token: randomUUID(), atMs: Date.now() };
    try {
      await writeLock(path, info, 'link');
      const h: Held = { info, timer: startRefresh(path, info, staleAfterMs), identity: undefined };
      held.set(path, h);
      h.identity = await verifiedIdentity(path, info.token);
      return;
    } catch (e) {
      if ((e as { code?: string }).code !== 'EEXIST') throw e;
    }
    const found = await readLock(path);
    if (found === undefined) continue; // released meanwhile: try again
    const now = Date.now();
    const other = found.info;
    const stale =
      other === undefined ? now - found.mtimeMs > staleAfterMs : other.host === host ? !alive(other.pid) : now - other.atMs > staleAfterMs;
    if (!stale) {
      const who = other ? `pid ${other.pid} on ${other.host}, owner ${other.owner}` : 'a run that is still writing it';
      throw new SyncError(
        ErrorCodes.CONFLICT,
        'conflict',
        `another audit export holds ${path} (${who}); wait for it or remove the file if that process is gone`,
      );
    }
    await unlink(path).catch(() => undefined);
  }
  throw new SyncError(ErrorCodes.CONFLICT, 'conflict', `could not take the lock ${path}`);
}

/** Rewrites the lock's time every third of the stale time, while the file still carries our token. */
function startRefresh(path: string, info: LockInfo, staleAfterMs: number): NodeJS.Timeout {
  const timer = setInterval(
    () => {
      void (async () => {
        const found = await readLock(path);
        if (found?.info?.token !== info.token) return; // taken over: commits will refuse
        await writeLock(path, { ...info, atMs: Date.now() }, 'rename');
        const h = held.get(path);
        if (h?.info === info) h.identity = await verifiedIdentity(path, info.token);
      })().catch(() => undefined);
    },
    Math.max(50, Math.floor(staleAfterMs / 3)),
  );
  timer.unref();
  return timer;
}

export async function releaseFileLock(path: string): Promise<void> {
  const h = held.get(path);
  if (!h) return;
  held.delete(path);
  clearInterval(h.timer);
  const found = await readLock(path).catch(() => undefined);
  // Never remove a lock another run has taken over meanwhile.
  if (found?.info?.token === h.info.token) await unlink(path).catch(() => undefined);
}

/** This process took the lock and the file still carries its token (no other run took it over). */
export async function holdsFileLock(path: string): Promise<boolean> {
  const h = held.get(path);
  if (!h) return false;
  const st = await stat(path, { bigint: true }).catch(() => undefined);
  if (st === undefined) return false;
  if (h.identity !== undefined && identityOf(st) === h.identity) return true;
  // Replaced, rewritten or only touched (a backup tool): the content decides.
  h.identity = await verifiedIdentity(path, h.info.token).catch(() => undefined);
  return h.identity !== undefined;
}
