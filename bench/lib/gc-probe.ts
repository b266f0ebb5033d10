/**
 * Loaded into a measured process with `node --import <this file>`, GC_PROBE_OUT=<file> in its
 * environment: records with v8.GCProfiler the heap after each of the process's own full
 * collections (mark-compact) and writes them to GC_PROBE_OUT when the process exits. It sets
 * no flag and forces no collection: V8 collects when and as it would. The heap after a full
 * collection is what the code's data structures keep alive at that moment — on the JavaScript
 * heap (`usedHeapSize`) and in ArrayBuffers/Buffers outside it (`externalMemory`). The profiler
 * keeps a record per collection, so peak RSS is measured in runs without the probe.
 */
import { writeFileSync } from 'node:fs';
import { GCProfiler } from 'node:v8';

const out = process.env['GC_PROBE_OUT'];
if (out !== undefined) {
  const profiler = new GCProfiler();
  profiler.start();
  process.on('exit', () => {
    const stats = profiler.stop()?.statistics ?? [];
    const full = stats
      .filter((s) => s.gcType === 'MarkSweepCompact')
      .map((s) => ({ usedHeapSize: s.afterGC.heapStatistics.usedHeapSize, externalMemory: s.afterGC.heapStatistics.externalMemory }));
    writeFileSync(out, JSON.stringify({ collections: stats.length, full }));
  });
}
