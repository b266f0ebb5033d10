/**
 * The live heap of a measured process: run it with `liveHeapProbe(file).args` before its
 * script and `.env` in its environment (bench/lib/gc-probe.ts records the heap after each of
 * its own full collections), then `readLiveHeap(file)` once it has exited. No V8 flag, no
 * forced collection: the largest heap found live after a full collection is what the data
 * structures keep at their largest (sampled at V8's own full collections, so a lower bound of
 * the true peak; a run under a memory limit collects more often, which samples it closer).
 */
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

export interface LiveHeap {
  /** Collections of every kind during the run. */
  collections: number;
  /** Full (mark-compact) collections: the samples. */
  fullCollections: number;
  /** Largest JavaScript heap in use after a full collection, MB. */
  maxLiveMb: number;
  /** ArrayBuffer/Buffer memory outside the heap at that same collection, MB. */
  externalAtMaxMb: number;
  /** Largest external memory after a full collection, MB. */
  maxExternalMb: number;
}

const PROBE = pathToFileURL(join(import.meta.dirname, 'gc-probe.ts')).href;

export function liveHeapProbe(file: string): { args: string[]; env: Record<string, string> } {
  return { args: ['--import', PROBE], env: { GC_PROBE_OUT: file } };
}

export async function readLiveHeap(file: string): Promise<LiveHeap | undefined> {
  const text = await readFile(file, 'utf8').catch(() => undefined);
  await rm(file, { force: true });
  if (text === undefined) return undefined;
  const { collections, full } = JSON.parse(text) as { collections: number; full: Array<{ usedHeapSize: number; externalMemory: number }> };
  const MB = 2 ** 20;
  const top = full.reduce<(typeof full)[number] | undefined>(
    (a, b) => (a === undefined || b.usedHeapSize > a.usedHeapSize ? b : a),
    undefined,
  );
  return {
    collections,
    fullCollections: full.length,
    maxLiveMb: (top?.usedHeapSize ?? 0) / MB,
    externalAtMaxMb: (top?.externalMemory ?? 0) / MB,
    maxExternalMb: Math.max(0, ...full.map((f) => f.externalMemory)) / MB,
  };
}
