/**
 * Child process for attributing memory: reads the configured provisioning source and
 * nothing else, then exits (`node bench/lib/read-source.ts <config> [--whole-json]`). Its
 * peak RSS, next to the full `plan`, shows how much of the planning peak the source read
 * alone is. Prints one JSON line: the counts, the read's wall and CPU time, RSS before the
 * read, and the heap after it: live (after a full GC when run with --expose-gc), old space
 * and the young generation's physical size (V8 grows it to its maximum while the live set
 * grows, and keeps it).
 *
 * `--whole-json`: the file source's read before it streamed (readFile, JSON.parse of the
 * whole text, then normalization), as the baseline of bench:sources.
 */
import { readFile } from 'node:fs/promises';
import { getHeapSpaceStatistics } from 'node:v8';
import { loadConfig } from '../../src/config/load.ts';
import type { DesiredState } from '../../src/identity/model.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { FileSource } from '../../src/sources/file/file-source.ts';
import { normalizeDocument } from '../../src/sources/file/normalize.ts';
import { createSource, sourceContext } from '../../src/sources/registry.ts';
import type { Source } from '../../src/sources/source.ts';

const path = process.argv[2];
if (path === undefined) throw new Error('usage: read-source.ts <config.yaml> [--whole-json]');
const loaded = await loadConfig(path);
if (!loaded.config.provisioning) throw new Error('the config has no provisioning section');
const source: Source = await createSource(loaded.config.provisioning.source, sourceContext(loaded, createLogger({ level: 'silent' })));

async function wholeJson(file: string): Promise<DesiredState> {
  const doc = JSON.parse(await readFile(file, 'utf8')) as { users: unknown[]; groups: unknown[] };
  return normalizeDocument(doc.users, doc.groups);
}

const MB = 1024 * 1024;
const baseRssMb = process.memoryUsage().rss / MB;
const t0 = performance.now();
const cpu0 = process.cpuUsage();
let desired: DesiredState;
if (process.argv.includes('--whole-json')) {
  const file = source instanceof FileSource ? source.path : undefined;
  if (file === undefined) throw new Error('--whole-json needs a file source');
  desired = await wholeJson(file);
} else desired = await source.read();
const readMs = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
await source.close?.();
const gc = (globalThis as { gc?: () => void }).gc;
gc?.();
const space = (name: string) => getHeapSpaceStatistics().find((s) => s.space_name === name);
process.stdout.write(
  `${JSON.stringify({
    users: desired.users.length,
    groups: desired.groups.length,
    memberships: desired.groups.reduce((n, g) => n + g.members.length, 0),
    rejected: desired.rejected.length,
    readMs,
    cpuMs: (cpu.user + cpu.system) / 1000,
    baseRssMb,
    liveHeapMb: gc ? process.memoryUsage().heapUsed / MB : undefined,
    oldSpaceMb: (space('old_space')?.space_used_size ?? 0) / MB,
    youngGenMb: (space('new_space')?.physical_space_size ?? 0) / MB,
  })}\n`,
);
