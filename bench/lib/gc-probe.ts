/**
 * Loaded into a measured process with `node --import <this file>`, GC_PROBE_OUT=<file> in its
 * environment: records with v8.GCProfiler the heap after each of the process's own full
 * collections (mark-compact) and writes them to GC_PROBE_OUT when the process exits. It sets
 * no flag and forces no collection: V8 collects when and as it would. The heap after a full
 * collection is what the code's data structures keep alive at that moment — on the JavaScript
 * heap (`usedHeapSize`) and in ArrayBuffers/Buffers outside it (`externalMemory`).
 *
 * The profiler keeps a JSON record of every collection in native memory (several KB each; an
 * apply of 100,000 users under a 512 MiB limit makes tens of thousands of scavenges): it is
 * drained every second, only the full collections kept. Peak RSS is still measured in runs
 * without the probe.
 */
import { writeFileSync } from 'node:fs';
import { GCProfiler } from 'node:v8';

const out = process.env['GC_PROBE_OUT'];
if (out !== undefined) {
  let profiler = new GCProfiler();
  profiler.start();
  let collections = 0;
  const full: Array<{ usedHeapSize: number; externalMemory: number }> = [];
  const drain = (): void => {
    const stats = profiler.stop()?.statistics ?? [];
    collections += stats.length;
    for (const s of stats)
      if (s.gcType === 'MarkSweepCompact')
        full.push({ usedHeapSize: s.afterGC.heapStatistics.usedHeapSize, externalMemory: s.afterGC.heapStatistics.externalMemory });
  };
  setInterval(() => {
    drain();
    profiler = new GCProfiler();
    profiler.start();
  }, 1000).unref();
  process.on('exit', () => {
    drain();
    writeFileSync(out, JSON.stringify({ collections, full }));
  });
}
