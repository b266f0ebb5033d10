/**
 * CPU time and resident memory of a running process from /proc (Linux), for idle-cost
 * measurements: CPU seconds = (utime + stime) / CLK_TCK of /proc/<pid>/stat, optionally with
 * the CPU of its children already waited for (cutime + cstime); RSS = VmRSS of /proc/<pid>/status.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

let clockTicks: number | undefined;

function ticksPerSecond(): number {
  if (clockTicks === undefined) {
    try {
      clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      clockTicks = 100;
    }
  }
  return clockTicks;
}

/** CPU seconds used so far; `children`: add the CPU of its exited children it waited for. Undefined once gone. */
export function cpuSeconds(pid: number | 'self', children = false): number | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name (field 2) may hold spaces: count fields after its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state): utime = field 14, stime 15, cutime 16, cstime 17.
  const n = (field: number): number => Number(fields[field - 3]);
  const ticks = n(14) + n(15) + (children ? n(16) + n(17) : 0);
  return ticks / ticksPerSecond();
}

export function rssMb(pid: number): number | undefined {
  try {
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}
