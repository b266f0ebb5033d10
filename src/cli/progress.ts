/**
 * Progress for long operations: a bar on a TTY (cli-progress, on stderr), periodic plain
 * lines otherwise (CI logs, Kubernetes Jobs), nothing when quiet.
 */
import cliProgress from 'cli-progress';

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

export function createProgress(opts: { label: string; stream?: NodeJS.WriteStream; quiet?: boolean; intervalMs?: number }): ProgressReporter {
  const stream = opts.stream ?? process.stderr;
  if (opts.quiet) return { update() {}, stop() {} };
  if (stream.isTTY) {
    const bar = new cliProgress.SingleBar(
      { stream, format: `${opts.label} [{bar}] {percentage}% | {value}/{total} | {phase} | failed {failed}`, hideCursor: true, clearOnComplete: false },
      cliProgress.Presets.shades_classic,
    );
    let started = false;
    return {
      update(p) {
        if (!started) {
          bar.start(Math.max(p.total, 1), p.done, { phase: p.phase, failed: p.failed });
          started = true;
        }
        bar.setTotal(Math.max(p.total, 1));
        bar.update(p.done, { phase: p.phase, failed: p.failed });
      },
      stop() {
        if (started) bar.stop();
      },
    };
  }
  const interval = opts.intervalMs ?? 5_000;
  let last = 0;
  let latest: ProgressState | undefined;
  const print = (p: ProgressState): void => {
    stream.write(`${opts.label}: ${p.done}/${p.total} (${p.phase}), ${p.failed} failed\n`);
  };
  return {
    update(p) {
      latest = p;
      const now = Date.now();
      if (now - last >= interval) {
        last = now;
        print(p);
      }
    },
    stop() {
      if (latest && latest.total > 0) print(latest);
    },
  };
}
