/**
 * The keys a file sink holds for a time range: its current file and the rotated files that can
 * hold such events, streamed line by line (memory holds only the range's keys). Read only.
 */
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { decodeFileLine } from '../sinks/file/encoder.ts';
import { listRotated, naming } from '../sinks/file/rotation.ts';

/** Tolerance for a platform clock ahead of ours (event time vs. our rotation time). */
const CLOCK_SKEW_MS = 5 * 60_000;

/** key → the number of lines holding it, with the event time. */
export type SinkKeys = Map<string, { ts: number; lines: number }>;

export async function sinkFileKeys(path: string, startMs: number, endMs: number): Promise<SinkKeys> {
  const rotated = (await listRotated(naming(path))).filter((f) => f.rotatedAtMs + CLOCK_SKEW_MS >= startMs);
  const out: SinkKeys = new Map();
  for (const file of [...rotated.map((f) => f.path), path]) {
    const stream = createReadStream(file, { encoding: 'utf8' });
    try {
      await new Promise<void>((resolve, reject) => {
        stream.once('open', () => resolve());
        stream.once('error', reject);
      });
    } catch (e) {
      if ((e as { code?: unknown }).code === 'ENOENT') continue;
      throw e;
    }
    for await (const line of createInterface({ input: stream, crlfDelay: Infinity })) {
      if (line === '') continue;
      const rec = decodeFileLine(line);
      if (!rec || rec.ts < startMs || rec.ts >= endMs) continue;
      const held = out.get(rec.key);
      if (held) held.lines++;
      else out.set(rec.key, { ts: rec.ts, lines: 1 });
    }
  }
  return out;
}
