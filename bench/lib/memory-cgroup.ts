/**
 * A memory cgroup with a limit, as Kubernetes gives a container (`resources.limits.memory`):
 * the kernel enforces it (OOM kill past it) and Node sizes V8's heap from it
 * (`process.constrainedMemory()`). cgroup v1 (`/sys/fs/cgroup/memory/…`) or v2; needs root.
 * Undefined where it cannot be created: the figure is then not measured (never emulated with
 * V8 flags, which would measure the flags).
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { ROOT } from './simulator-process.ts';

/** The Helm chart's default `resources.limits.memory` (helm/scim-audit-sync/values.yaml), bytes. */
export async function chartMemoryLimit(): Promise<number> {
  const values = parseYaml(await readFile(join(ROOT, 'helm', 'scim-audit-sync', 'values.yaml'), 'utf8')) as {
    resources: { limits: { memory: string } };
  };
  const m = /^(\d+)(Mi|Gi)$/.exec(values.resources.limits.memory);
  if (!m) throw new Error(`unexpected resources.limits.memory ${values.resources.limits.memory}`);
  return Number(m[1]) * 2 ** (m[2] === 'Gi' ? 30 : 20);
}

/** A cgroup at the chart's memory limit, or an error saying why none can be made. */
export async function chartLimitCgroup(name: string): Promise<MemoryCgroup> {
  const cgroup = await createMemoryCgroup(name, await chartMemoryLimit());
  if (!cgroup) throw new Error('no memory cgroup could be made (needs root and the memory controller, cgroup v1 or v2)');
  return cgroup;
}

export interface MemoryCgroup {
  limitBytes: number;
  /** `sh -c` arguments that move the shell into the cgroup, then exec the command (same pid). */
  wrap(command: string, args: string[]): [string, string[]];
  /** Peak memory charged to the cgroup (RSS and page cache), bytes. */
  peakBytes(): Promise<number>;
  /** Times the process was OOM-killed in the cgroup (0 when the kernel does not say). */
  oomKills(): Promise<number>;
  remove(): Promise<void>;
}

const V1 = '/sys/fs/cgroup/memory';
const V2 = '/sys/fs/cgroup';

const quote = (s: string): string => `'${s.replaceAll("'", "'\\''")}'`;

async function num(path: string, pattern?: RegExp): Promise<number> {
  const text = await readFile(path, 'utf8').catch(() => '');
  const m = pattern ? pattern.exec(text) : /\d+/.exec(text);
  return m ? Number(m[1] ?? m[0]) : 0;
}

export async function createMemoryCgroup(name: string, limitBytes: number): Promise<MemoryCgroup | undefined> {
  const v1 = existsSync(join(V1, 'memory.limit_in_bytes'));
  const dir = v1 ? join(V1, name) : join(V2, name);
  try {
    if (!v1 && !existsSync(join(V2, 'cgroup.controllers'))) return undefined;
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, v1 ? 'memory.limit_in_bytes' : 'memory.max'), String(limitBytes));
  } catch {
    return undefined;
  }
  return {
    limitBytes,
    wrap: (command, args) => [
      'sh',
      ['-c', `echo $$ > ${quote(join(dir, 'cgroup.procs'))} && exec ${[command, ...args].map(quote).join(' ')}`],
    ],
    peakBytes: () => num(join(dir, v1 ? 'memory.max_usage_in_bytes' : 'memory.peak')),
    oomKills: () => (v1 ? num(join(dir, 'memory.oom_control'), /oom_kill (\d+)/) : num(join(dir, 'memory.events'), /oom_kill (\d+)/)),
    remove: () => rmdir(dir).catch(() => undefined),
  };
}
