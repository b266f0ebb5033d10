/**
 * Runs the CLI (or the daemon) as a child process like runMeasured (peak RSS = VmHWM sampled
 * every 100 ms, wall time), reading its structured log as it arrives: the engine's timing
 * line, the change lines of `user.create` (how many, first and last time: the create rate of
 * the users phase), and an optional early stop once enough users were created (a long
 * initial sync measured over a prefix). Only the tail of stderr is kept.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { vmHwmMb } from './peak-rss.ts';

export interface CliRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  wallMs: number;
  peakRssMb: number | undefined;
  stdout: string;
  stderrTail: string;
  /** The engine's `plan computed` timings. */
  timings: { sourceMs: number; platformMs: number; planMs: number } | undefined;
  /** `user.create` change lines: count and the log times (ms) of the first and the last. */
  creates: { count: number; firstMs: number | undefined; lastMs: number | undefined };
  /** True when the run was stopped after `stopAfterCreates`. */
  stopped: boolean;
}

export interface CliRunOptions {
  env: NodeJS.ProcessEnv;
  cwd?: string;
  keepStdout?: boolean;
  /** SIGTERM once this many users were created (a prefix of a long initial sync). */
  stopAfterCreates?: number;
}

/** Users created per second in the users phase: (count − 1) / (last − first). */
export function createRate(c: CliRun['creates']): number {
  if (c.firstMs === undefined || c.lastMs === undefined || c.lastMs <= c.firstMs) return 0;
  return (c.count - 1) / ((c.lastMs - c.firstMs) / 1000);
}

export async function runCli(command: string, args: string[], opts: CliRunOptions): Promise<CliRun> {
  const started = performance.now();
  const child = spawn(command, args, { env: opts.env, cwd: opts.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  const out: Buffer[] = [];
  child.stdout.on('data', (d: Buffer) => {
    if (opts.keepStdout) out.push(d);
  });
  let tail = '';
  let timings: CliRun['timings'];
  const creates: CliRun['creates'] = { count: 0, firstMs: undefined, lastMs: undefined };
  let stopped = false;
  createInterface({ input: child.stderr }).on('line', (line) => {
    tail = `${tail}${line}\n`.slice(-16_000);
    if (!line.startsWith('{')) return;
    if (line.includes('"msg":"user.create"')) {
      const time = /"time":(\d+)/.exec(line);
      if (!time) return;
      creates.count++;
      creates.firstMs ??= Number(time[1]);
      creates.lastMs = Number(time[1]);
      if (opts.stopAfterCreates !== undefined && creates.count >= opts.stopAfterCreates && !stopped) {
        stopped = true;
        child.kill('SIGTERM');
      }
    } else if (timings === undefined && line.includes('"timings"')) {
      try {
        timings = (JSON.parse(line) as { timings: CliRun['timings'] }).timings;
      } catch {
        // not a JSON log line
      }
    }
  });
  let peak: number | undefined;
  const pid = child.pid ?? -1;
  const timer = setInterval(() => {
    void vmHwmMb(pid).then((mb) => {
      if (mb !== undefined) peak = Math.max(peak ?? 0, mb);
    });
  }, 100);
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
    child.on('close', (c, s) => resolve([c, s])),
  );
  clearInterval(timer);
  return {
    code,
    signal,
    wallMs: performance.now() - started,
    peakRssMb: peak,
    stdout: Buffer.concat(out).toString('utf8'),
    stderrTail: tail,
    timings,
    creates,
    stopped,
  };
}
