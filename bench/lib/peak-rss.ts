/**
 * Runs a command as a child process and reports its wall time and peak RSS. Peak RSS is
 * the kernel's high-water mark (VmHWM in /proc/<pid>/status), sampled every `sampleMs` (100 ms: rarely enough not to compete with what it measures):
 * being a high-water mark, a sample only misses growth in the last interval before exit.
 * Only the child itself is measured, never this process.
 */
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';

export interface MeasuredRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  wallMs: number;
  /** Undefined where /proc is not available (not Linux). */
  peakRssMb: number | undefined;
  stdout: string;
  stderr: string;
}

export async function vmHwmMb(pid: number): Promise<number | undefined> {
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const m = /^VmHWM:\s+(\d+)\s+kB/m.exec(status);
    return m ? Number(m[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

export async function runMeasured(
  command: string,
  args: string[],
  opts: { env?: NodeJS.ProcessEnv; cwd?: string; sampleMs?: number; keepStdout?: boolean } = {},
): Promise<MeasuredRun> {
  const started = performance.now();
  const child = spawn(command, args, { env: opts.env ?? process.env, cwd: opts.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  const out: Buffer[] = [];
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => {
    if (opts.keepStdout) out.push(d);
  });
  child.stderr.on('data', (d: Buffer) => {
    if (stderr.length < 64_000) stderr += d.toString();
  });
  let peak: number | undefined;
  const pid = child.pid ?? -1;
  const sample = async (): Promise<void> => {
    const mb = await vmHwmMb(pid);
    if (mb !== undefined) peak = Math.max(peak ?? 0, mb);
  };
  const timer = setInterval(() => void sample(), opts.sampleMs ?? 100);
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
    child.on('close', (c, s) => resolve([c, s])),
  );
  clearInterval(timer);
  return { code, signal, wallMs: performance.now() - started, peakRssMb: peak, stdout: Buffer.concat(out).toString('utf8'), stderr };
}
