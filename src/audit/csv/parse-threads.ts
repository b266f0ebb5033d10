/**
 * The parse threads: csv-parse runs on a worker thread so that parsing one chunk overlaps
 * with building, deduplicating and delivering the events of the one before (two cores
 * instead of one). A thread serves one export body at a time and is kept for the next one;
 * idle threads do not keep the process alive.
 */
import { Worker } from 'node:worker_threads';

/** Same extension as this module: `.ts` when run from the sources, `.js` once compiled. */
const WORKER_URL = new URL(`./parse-worker${import.meta.url.slice(import.meta.url.lastIndexOf('.'))}`, import.meta.url);

/**
 * The parse thread holds a chunk, the records it completes and csv-parse's buffers: small
 * and short-lived, so a small young generation suffices and keeps its memory low. The old
 * generation only grows with a single record of many megabytes (an unterminated quote).
 */
const RESOURCE_LIMITS = { maxYoungGenerationSizeMb: 8, maxOldGenerationSizeMb: 512 };

const idle: Worker[] = [];

export function acquireParseThread(): Worker {
  const w = idle.pop() ?? new Worker(WORKER_URL, { resourceLimits: RESOURCE_LIMITS, stdout: false, stderr: false });
  w.ref();
  return w;
}

/** Back to the pool: only a thread that finished its body cleanly (nothing of it in flight). */
export function releaseParseThread(w: Worker): void {
  w.removeAllListeners('message');
  w.removeAllListeners('error');
  w.removeAllListeners('exit');
  w.unref();
  idle.push(w);
}

/** A thread in an unknown state (failed or abandoned body) is not reused. */
export function discardParseThread(w: Worker): void {
  w.removeAllListeners('message');
  void w.terminate();
}

/** Ends the idle threads (tests, shutdown). */
export async function closeParseThreads(): Promise<void> {
  const all = idle.splice(0);
  await Promise.all(all.map((w) => w.terminate()));
}
