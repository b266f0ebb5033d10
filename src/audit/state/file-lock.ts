/**
 * A lock file (`O_EXCL`) so two one-shot runs on the same state directory cannot interleave
 * commits. A lock left by a killed process is taken over: same host and the pid is gone (or
 * is us, as after a container restart), or another host's lock older than `staleAfterMs`.
 */
import { hostname } from 'node:os';
import { mkdir, open, readFile, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { ErrorCodes, SyncError } from '../../platform/errors.ts';

interface LockInfo {
  pid: number;
  host: string;
  owner: string;
  atMs: number;
}

/** Locks held by this process, so a second acquire in the same process is refused too. */
const heldHere = new Set<string>();

function alive(pid: number): boolean {
  if (pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as { code?: string }).code === 'EPERM';
  }
}

async function readLock(path: string): Promise<LockInfo | undefined> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as LockInfo;
  } catch {
    return undefined;
  }
}

export async function acquireFileLock(path: string, owner: string, staleAfterMs = 10 * 60_000): Promise<void> {
  if (heldHere.has(path)) throw new SyncError(ErrorCodes.CONFLICT, 'conflict', `another audit export is already running in this process (${path})`);
  await mkdir(dirname(path), { recursive: true });
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fh = await open(path, 'wx', 0o600);
      const info: LockInfo = { pid: process.pid, host: hostname(), owner, atMs: Date.now() };
      await fh.writeFile(JSON.stringify(info));
      await fh.close();
      heldHere.add(path);
      return;
    } catch (e) {
      if ((e as { code?: string }).code !== 'EEXIST') throw e;
    }
    const info = await readLock(path);
    const stale =
      info === undefined ||
      (info.host === hostname() ? !alive(info.pid) : Date.now() - info.atMs > staleAfterMs);
    if (!stale) {
      throw new SyncError(ErrorCodes.CONFLICT, 'conflict', `another audit export holds ${path} (pid ${info.pid} on ${info.host}, owner ${info.owner}); wait for it or remove the file if that process is gone`);
    }
    await unlink(path).catch(() => undefined);
  }
  throw new SyncError(ErrorCodes.CONFLICT, 'conflict', `could not take the lock ${path}`);
}

export async function releaseFileLock(path: string): Promise<void> {
  if (!heldHere.delete(path)) return;
  await unlink(path).catch(() => undefined);
}

export function holdsFileLock(path: string): boolean {
  return heldHere.has(path);
}
