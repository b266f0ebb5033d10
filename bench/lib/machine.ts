/** One line describing where a benchmark ran, for bench/RESULTS.md. */
import { availableParallelism, cpus, loadavg, totalmem } from 'node:os';

export interface Machine {
  date: string;
  nproc: number;
  memoryGb: number;
  cpu: string;
  node: string;
  /** 1-minute load average when the run started: other work on a shared machine skews timings. */
  load: number;
}

export function machine(): Machine {
  return {
    date: new Date().toISOString(),
    nproc: availableParallelism(),
    memoryGb: Math.round((totalmem() / 1024 ** 3) * 10) / 10,
    cpu: cpus()[0]?.model.trim() ?? 'unknown',
    node: process.versions.node,
    load: Math.round((loadavg()[0] ?? 0) * 10) / 10,
  };
}

export function describeMachine(m: Machine = machine()): string {
  return `${m.date.slice(0, 19).replace('T', ' ')} UTC · ${m.nproc} CPUs (${m.cpu}) · ${m.memoryGb} GB RAM · Node ${m.node} · load average ${m.load} at start`;
}
