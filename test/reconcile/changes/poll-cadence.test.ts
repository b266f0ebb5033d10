/**
 * The change loop's poll cadence: rounds start every poll interval, so a change made while a
 * slow round ran is asked for as soon as the interval is over, not an interval after the round
 * ended. A failed round waits the whole interval (a directory that is down is not hammered).
 * A batch waits for more changes to the same people until its newest change is coalesceMs old.
 */
import { describe, expect, it } from 'vitest';
import { ChangeLoop, coalesceWait, type ChangeLoopDeps } from '../../../src/reconcile/changes/change-loop.ts';
import { createLogger } from '../../../src/observability/logger.ts';
import { emptyDelta, type ChangeSource, type SourceChanges, type SourceDelta } from '../../../src/sources/changes.ts';
import { provisioningConfig } from './support.ts';

/** A directory whose change answers take `roundMs` of the loop's clock; `fail` makes the next one throw. */
function quietSource(clock: { t: number }, roundMs: number): ChangeSource & { fail: boolean } {
  return {
    describe: 'quiet directory',
    fail: false,
    read: async () => ({ users: [], groups: [], rejected: [], stats: {} }),
    check: async () => 'ok',
    changeMechanism: () => ({ name: 'test-poll', pollIntervalMs: 2_000, blindSpots: [] }),
    async changes(): Promise<SourceChanges> {
      clock.t += roundMs;
      if (this.fail) throw new Error('directory unavailable');
      return emptyDelta('c1');
    },
  };
}

function loopOver(source: ChangeSource, clock: { t: number }): ChangeLoop {
  let saved: string | undefined;
  const unused = (): never => {
    throw new Error('a quiet directory plans nothing');
  };
  const deps: ChangeLoopDeps = {
    tenant: 't',
    source,
    config: provisioningConfig(),
    target: unused as unknown as ChangeLoopDeps['target'],
    ledgerStore: unused as unknown as ChangeLoopDeps['ledgerStore'],
    cursor: { load: async () => saved, save: async (c) => void (saved = c) },
    burst: unused as unknown as ChangeLoopDeps['burst'],
    writer: { exclusive: unused, apply: unused },
    requestFull: async () => undefined,
    logger: createLogger({ level: 'silent' }),
    now: () => clock.t,
  };
  return new ChangeLoop(deps);
}

describe('change loop poll cadence', () => {
  it('waits the rest of the interval after a quick round and not at all after a round longer than it', async () => {
    const clock = { t: 1_000_000 };
    const quick = loopOver(quietSource(clock, 300), clock);
    expect(quick.untilNextPoll()).toBe(2_000);
    expect(await quick.pollOnce()).toEqual({ kind: 'idle' });
    expect(quick.untilNextPoll()).toBe(1_700);

    const slow = loopOver(quietSource(clock, 2_600), clock);
    await slow.pollOnce();
    expect(slow.untilNextPoll()).toBe(0);
  });

  it('a failed round waits the whole interval; a clock set back never makes it longer', async () => {
    const clock = { t: 1_000_000 };
    const source = quietSource(clock, 2_600);
    const loop = loopOver(source, clock);
    source.fail = true;
    await expect(loop.pollOnce()).rejects.toThrow('directory unavailable');
    expect(loop.untilNextPoll(true)).toBe(2_000);
    source.fail = false;
    await loop.pollOnce();
    clock.t -= 3_600_000;
    expect(loop.untilNextPoll()).toBe(2_000);
  });
});

describe('coalescing window', () => {
  const delta = (changedAt: Record<string, number>, removed: string[]): SourceDelta => ({
    ...emptyDelta('c'),
    users: { upserted: [], removed },
    changedAt,
  });

  it('runs from the newest change time the directory gave, not from when the poll saw it', () => {
    const now = 1_000_000;
    expect(coalesceWait(delta({ a: now - 300, b: now - 2_000 }, ['a', 'b']), 1_000, now)).toBe(700);
    // Both changes waited for the poll longer than the window: applied at once.
    expect(coalesceWait(delta({ a: now - 1_500, b: now - 2_000 }, ['a', 'b']), 1_000, now)).toBe(0);
    // A directory clock ahead of this host's never makes the wait longer than the window.
    expect(coalesceWait(delta({ a: now + 60_000 }, ['a']), 1_000, now)).toBe(1_000);
  });

  it('a change without a time is timed from now; nothing changed or a window of 0 means no wait', () => {
    const now = 1_000_000;
    expect(coalesceWait(delta({ a: now - 5_000 }, ['a', 'b']), 1_000, now)).toBe(1_000);
    expect(coalesceWait(delta({}, []), 1_000, now)).toBe(0);
    expect(coalesceWait(delta({ a: now }, ['a']), 0, now)).toBe(0);
  });
});
