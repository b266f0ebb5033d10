/**
 * Progress of `audit export`: windows done of this run and events read (a re-run that
 * re-reads a long overlap starts at 0, whatever the stored cursor). A bar on a TTY
 * (cli-progress, on stderr), a plain line every few seconds otherwise, nothing when quiet.
 */
import { createRequire } from 'node:module';
import type cliProgressModule from 'cli-progress';

// cli-progress (CommonJS) is required only when a bar is drawn on a terminal: plain-line progress
// (CI, Jobs, pipes) never loads it.
const require = createRequire(import.meta.url);
import type { AuditProgress } from '../audit/run-audit-export.ts';

export interface AuditProgressReporter {
  update(p: AuditProgress): void;
  stop(): void;
}

const count = (n: number): string => n.toLocaleString('en');

/** `window 3/24 done, 120,345 events read (12%)`: the plain line, also the bar's text. */
export function auditProgressText(p: AuditProgress): string {
  const window =
    p.phase === 'window-start' && p.windowsDone < p.windowCount
      ? `window ${p.windowIndex + 1}/${p.windowCount}`
      : `${p.windowsDone}/${p.windowCount} windows done`;
  return `${window}, ${count(p.eventsRead)} events read (${Math.floor(p.ratio * 100)}%)`;
}

export function createAuditProgress(opts: { stream?: NodeJS.WriteStream; quiet?: boolean; intervalMs?: number }): AuditProgressReporter {
  const stream = opts.stream ?? process.stderr;
  if (opts.quiet) return { update() {}, stop() {} };
  if (stream.isTTY) {
    const cliProgress = require('cli-progress') as typeof cliProgressModule;
    const bar = new cliProgress.SingleBar(
      {
        stream,
        format: 'audit export [{bar}] {percentage}% | {windows} windows | {events} events read',
        hideCursor: true,
        clearOnComplete: false,
      },
      cliProgress.Presets.shades_classic,
    );
    let started = false;
    return {
      update(p) {
        const payload = { windows: `${p.windowsDone}/${p.windowCount}`, events: count(p.eventsRead) };
        // The bar runs over this run's range (0..1000 steps of it), not over the stored cursor.
        if (!started) bar.start(1000, 0, payload);
        started = true;
        bar.update(Math.round(p.ratio * 1000), payload);
      },
      stop() {
        if (started) bar.stop();
      },
    };
  }
  const interval = opts.intervalMs ?? 5_000;
  let last = 0;
  let latest: AuditProgress | undefined;
  const print = (p: AuditProgress): void => void stream.write(`audit export: ${auditProgressText(p)}\n`);
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
      if (latest) print(latest);
    },
  };
}
