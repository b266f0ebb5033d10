/**
 * What `plan` and `apply` are doing before the plan exists, on a terminal: one status line on
 * stderr (`reading the source file:… 3 s`, `listing the platform: 12,000 users, 40 groups`),
 * redrawn in place and erased when the plan is ready. Not a terminal (pipes, CI, Jobs) or
 * TERM=dumb: nothing at all, so logs and captured output stay as they were.
 */
import type { PlanProgress } from '../reconcile/engine.ts';
import { printable } from '../observability/printable.ts';

export interface PlanProgressLine {
  update(p: PlanProgress): void;
  stop(): void;
}

const NONE: PlanProgressLine = { update() {}, stop() {} };

const count = (n: number): string => n.toLocaleString('en-US');

/** `source`: the source's description, shown while it is read. */
export function createPlanProgress(source: string, stream: NodeJS.WriteStream = process.stderr): PlanProgressLine {
  // A dumb terminal cannot erase a line: it would keep every redraw.
  if (stream.isTTY !== true || process.env['TERM'] === 'dumb') return NONE;
  const started = performance.now();
  let last: PlanProgress | undefined;
  let drawn = false;
  const text = (p: PlanProgress): string => {
    const secs = `${Math.floor((performance.now() - started) / 1000)} s`;
    if (p.phase === 'source') return `reading the source ${printable(source)}… ${secs}`;
    if (p.phase === 'platform') return `listing the platform: ${count(p.users)} users, ${count(p.groups)} groups… ${secs}`;
    return `computing the plan (${count(p.users)} users, ${count(p.groups)} groups on the platform)… ${secs}`;
  };
  const draw = (): void => {
    if (!last) return;
    // A terminal that reports no size (0 columns) gets the usual 80.
    const width = Math.max(20, (stream.columns > 0 ? stream.columns : 80) - 1);
    stream.write(`\r\x1b[2K${text(last).slice(0, width)}`);
    drawn = true;
  };
  // Redrawn every second too, so a long source read shows time passing.
  const timer = setInterval(draw, 1000);
  timer.unref();
  let lastDraw = 0;
  return {
    update(p) {
      const phaseChanged = last?.phase !== p.phase;
      last = p;
      const now = performance.now();
      if (phaseChanged || now - lastDraw >= 100) {
        lastDraw = now;
        draw();
      }
    },
    stop() {
      clearInterval(timer);
      if (drawn) stream.write('\r\x1b[2K');
    },
  };
}
