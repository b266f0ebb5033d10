import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createProgress, formatDuration, pace } from '../../src/cli/progress.ts';

function stream(tty: boolean): { s: NodeJS.WriteStream; text: () => string } {
  const chunks: string[] = [];
  const s = new PassThrough() as unknown as NodeJS.WriteStream & Record<string, unknown>;
  (s as unknown as PassThrough).on('data', (c: Buffer) => chunks.push(c.toString('utf8')));
  Object.assign(s, {
    isTTY: tty,
    columns: 200,
    cursorTo: () => true,
    clearLine: () => true,
    moveCursor: () => true,
    clearScreenDown: () => true,
  });
  return { s, text: () => chunks.join('') };
}

/** What apply reports for a plan with users and memberships but no deletions. */
function applyRun(update: (p: { phase: string; done: number; total: number; failed: number }) => void, tick: () => void): void {
  update({ phase: 'start', done: 0, total: 4, failed: 0 });
  update({ phase: 'users', done: 0, total: 4, failed: 0 });
  for (let i = 1; i <= 3; i++) {
    tick();
    update({ phase: 'users', done: i, total: 4, failed: 0 });
  }
  update({ phase: 'groups', done: 3, total: 4, failed: 0 });
  update({ phase: 'memberships', done: 3, total: 4, failed: 0 });
  tick();
  update({ phase: 'memberships', done: 4, total: 4, failed: 0 });
  update({ phase: 'group-deletes', done: 4, total: 4, failed: 0 });
  update({ phase: 'user-removals', done: 4, total: 4, failed: 0 });
}

describe('apply progress', () => {
  it('rate and time left from the work done so far', () => {
    expect(pace(30, 120, 10_000)).toEqual({ rate: '3.0/s', eta: '30 s' });
    expect(pace(0, 120, 10_000)).toEqual({ rate: '0.0/s', eta: '--' });
    expect(pace(120, 120, 4_000)).toEqual({ rate: '30/s', eta: '0 s' });
    expect(formatDuration(3725)).toBe('1 h 02 min');
    expect(formatDuration(125)).toBe('2 min 05 s');
  });

  it('plain lines (CI, Jobs) show rate and ETA, and never name a phase with no work', () => {
    const { s, text } = stream(false);
    let t = 0;
    const p = createProgress({ label: 'apply', stream: s, intervalMs: 0, now: () => t });
    applyRun(
      (x) => p.update(x),
      () => (t += 500),
    );
    p.stop();
    const lines = text().trim().split('\n');
    expect(lines[0]).toBe('apply: 0/4, 0 failed, 0.0/s, -- left');
    expect(lines).toContain('apply: 2/4 (users), 0 failed, 2.0/s, 1 s left');
    expect(lines.at(-1)).toBe('apply: 4/4 (memberships), 0 failed, 2.0/s, 0 s left');
    for (const empty of ['start', 'groups', 'group-deletes', 'user-removals']) expect(text()).not.toContain(`(${empty})`);
  });

  it('the terminal bar shows rate, ETA and the last phase that did work', () => {
    const { s, text } = stream(true);
    let t = 0;
    const p = createProgress({ label: 'apply', stream: s, now: () => t });
    applyRun(
      (x) => p.update(x),
      () => (t += 250),
    );
    p.stop();
    const out = text().replace(/\u001b\[[0-9;?]*[A-Za-z]|\u001b[78]/g, '');
    expect(out).toContain('100% | 4/4 | 4.0/s | 0 s left | memberships | failed 0');
    expect(out).not.toContain('user-removals');
    expect(out).not.toContain('group-deletes');
  });
});
