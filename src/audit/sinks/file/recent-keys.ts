/**
 * Keys of events with `_ts` ≥ sinceMs, streaming line by line over the current file and
 * the rotated files that can hold such events (memory holds only the answer).
 */
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { decodeFileLine } from './encoder.ts';
import { listRotated, type FileNaming } from './rotation.ts';

/** Tolerance for a platform clock ahead of ours (event time vs. our rotation time). */
const CLOCK_SKEW_MS = 5 * 60_000;

export interface ScanResult {
  keys: Set<string>;
  /** Lines that are not ours (hand-edited, foreign); counted, never fatal. */
  unreadable: number;
  files: number;
}

export async function scanRecentKeys(current: string, n: FileNaming, sinceMs: number): Promise<ScanResult> {
  const rotated = (await listRotated(n)).filter((f) => f.rotatedAtMs + CLOCK_SKEW_MS >= sinceMs);
  const result: ScanResult = { keys: new Set(), unreadable: 0, files: 0 };
  for (const path of [...rotated.map((f) => f.path), current]) {
    const stream = createReadStream(path, { encoding: 'utf8' });
    try {
      await new Promise<void>((resolve, reject) => {
        stream.once('open', () => resolve());
        stream.once('error', reject);
      });
    } catch (e) {
      if ((e as { code?: unknown }).code === 'ENOENT') continue; // deleted by retention meanwhile
      throw e;
    }
    result.files++;
    for await (const line of createInterface({ input: stream, crlfDelay: Infinity })) {
      if (line === '') continue;
      const rec = decodeFileLine(line);
      if (!rec) result.unreadable++;
      else if (rec.ts >= sinceMs) result.keys.add(rec.key);
    }
  }
  return result;
}
