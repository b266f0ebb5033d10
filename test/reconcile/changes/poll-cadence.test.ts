/**
 * The change loop's poll cadence: rounds start every poll interval, so a change made while a
 * slow round ran is asked for as soon as the interval is over, not an interval after the round
 * ended. A failed round waits the whole interval (a directory that is down is not hammered).
 */
import { describe, expect, it } from 'vitest';
import { ChangeLoop, type ChangeLoopDeps } from '../../../src/reconcile/changes/change-loop.ts';
import { createLogger } from '../../../src/observability/logger.ts';
import { emptyDelta, type ChangeSource, type SourceChanges } from '../../../src/sources/changes.ts';
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
