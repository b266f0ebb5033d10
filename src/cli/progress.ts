/**
 * Progress for long operations: a bar on a TTY (cli-progress, on stderr), periodic plain
 * lines otherwise (CI logs, Kubernetes Jobs), nothing when quiet. Both show the rate and the
 * time left. A phase is named only once work in it has completed: a phase with nothing to do
 * (no deletions, say) never appears, and neither does the "start" before the first task.
 */
import { createRequire } from 'node:module';
import type cliProgressModule from 'cli-progress';

// cli-progress (CommonJS) is required only when a bar is drawn on a terminal: plain-line progress
// (CI, Jobs, pipes) never loads it.
const require = createRequire(import.meta.url);

export interface ProgressState {
  phase: string;
  done: number;
  total: number;
  failed: number;
}

export interface ProgressReporter {
  update(p: ProgressState): void;
  stop(): void;
}

export interface ProgressOptions {
  label: string;
  stream?: NodeJS.WriteStream;
  quiet?: boolean;
  intervalMs?: number;
  /** Test seam: monotonic clock, milliseconds. */
  now?: () => number;
}

/** `42 s`, `3 min 05 s`, `1 h 02 min`; `--` while unknown. */
export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return '--';
  const s = Math.round(seconds);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
  return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')} min`;
}

/** Rate (items/s) and time left from the work done since the first update. */
export function pace(done: number, total: number, elapsedMs: number): { rate: string; eta: string } {
  const perSecond = elapsedMs > 0 ? (done * 1000) / elapsedMs : 0;
  const rate = perSecond >= 10 ? perSecond.toFixed(0) : perSecond.toFixed(1);
  const eta = done >= total ? formatDuration(0) : perSecond > 0 ? formatDuration((total - done) / perSecond) : '--';
  return { rate: `${rate}/s`, eta };
}

/** Keeps the name of the phase in which work last completed. */
function phaseTracker(): (p: ProgressState) => string {
  let lastDone = 0;
  let shown = '';
  return (p) => {
    if (p.done > lastDone) {
      lastDone = p.done;
      shown = p.phase;
    }
    return shown;
  };
}

export function createProgress(opts: ProgressOptions): ProgressReporter {
  const stream = opts.stream ?? process.stderr;
  if (opts.quiet) return { update() {}, stop() {} };
  const now = opts.now ?? (() => performance.now());
  const phaseOf = phaseTracker();
  let startedAt: number | undefined;
  const fields = (p: ProgressState): Record<string, string | number> => {
    startedAt ??= now();
    const { rate, eta } = pace(p.done, p.total, now() - startedAt);
    const phase = phaseOf(p);
    // Not `eta`/`rate`: cli-progress has its own `{eta}` token, computed differently.
    return { phase: phase ? ` | ${phase}` : '', failed: p.failed, speed: rate, left: eta };
  };
  if (stream.isTTY) {
    const cliProgress = require('cli-progress') as typeof cliProgressModule;
    const bar = new cliProgress.SingleBar(
      {
        stream,
        format: `${opts.label} [{bar}] {percentage}% | {value}/{total} | {speed} | {left} left{phase} | failed {failed}`,
        hideCursor: true,
        clearOnComplete: false,
      },
      cliProgress.Presets.shades_classic,
    );
    let started = false;
    return {
      update(p) {
        const f = fields(p);
        if (!started) {
          bar.start(Math.max(p.total, 1), p.done, f);
          started = true;
        }
        bar.setTotal(Math.max(p.total, 1));
        bar.update(p.done, f);
      },
      stop() {
        if (started) bar.stop();
      },
    };
  }
  const interval = opts.intervalMs ?? 5_000;
  let last = Number.NEGATIVE_INFINITY;
  let latest: { p: ProgressState; f: Record<string, string | number> } | undefined;
  const print = ({ p, f }: NonNullable<typeof latest>): void => {
    stream.write(
      `${opts.label}: ${p.done}/${p.total}${f['phase'] ? ` (${String(f['phase']).slice(3)})` : ''}, ${p.failed} failed, ${f['speed']}, ${f['left']} left\n`,
    );
  };
  return {
    update(p) {
      latest = { p, f: fields(p) };
      const t = now();
      if (t - last >= interval) {
        last = t;
        print(latest);
      }
    },
    stop() {
      if (latest && latest.p.total > 0) print(latest);
    },
  };
}
