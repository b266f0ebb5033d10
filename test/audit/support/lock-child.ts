/**
 * Child process for the lock tests: another process (as if on `host`) tries to take the run
 * lock at `path` once and prints `acquired` or the error code.
 * Usage: node lock-child.ts <path> <host> <staleAfterMs>
 */
import { acquireFileLock, releaseFileLock } from '../../../src/audit/state/file-lock.ts';

const [path, host, stale] = process.argv.slice(2) as [string, string, string];
try {
  await acquireFileLock(path, 'contender', { host, staleAfterMs: Number(stale) });
  process.stdout.write('acquired\n');
  await releaseFileLock(path);
} catch (e) {
  process.stdout.write(`${(e as { code?: string }).code ?? (e as Error).message}\n`);
}
