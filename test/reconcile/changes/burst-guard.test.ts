/**
 * The deletion guard over time: destructive changes applied one batch at a time count toward
 * the guard's limits over the rolling window, a held burst holds every later destructive
 * change, and a full plan under a held burst is held until an approval covers it.
 */
import { describe, expect, it } from 'vitest';
import { provisioningConfig } from './support.ts';
import { checkBurst, enforceBurstHold, MemoryBurstStore } from '../../../src/reconcile/changes/burst-guard.ts';
import { mergeDeltas } from '../../../src/reconcile/changes/coalesce.ts';
import { reconcilePattern } from '../../../src/config/reconcile-schedule.ts';
import type { Plan } from '../../../src/reconcile/plan-types.ts';
import type { SourceDelta } from '../../../src/sources/changes.ts';

const cfg = provisioningConfig({ guards: { maxDeletes: 2, maxDeletePercent: 50, maxMemberRemovals: 10 } });

/** The guard verdict of a plan with `destructive` deactivations and `memberRemovals` member removals, not tripped. */
function planWith(destructive: number, memberRemovals = 0): Plan {
  return {
    guard: {
      tripped: false,
      reasons: [],
      destructive,
      managed: 100,
      maxDeletes: 2,
      maxDeletePercent: 50,
      memberRemovals,
      members: 100,
      maxMemberRemovals: 10,
      maxMemberRemovalPercent: 50,
      overridden: false,
    },
  } as unknown as Plan;
}

describe('the rolling-window guard', () => {
  it('a third leaver within the window exceeds maxDeletes though each batch is under it', async () => {
    const store = new MemoryBurstStore();
    const now = 1_000_000;
    for (const at of [now, now + 1_000]) {
      const v = checkBurst({ destructive: 1, memberRemovals: 0 }, await store.appliedSince(at - 3_600_000), 100, cfg, undefined);
      expect(v.held).toBe(false);
      await store.recordApplied(at, { destructive: 1, memberRemovals: 0 });
    }
    const third = checkBurst({ destructive: 1, memberRemovals: 0 }, await store.appliedSince(now + 2_000 - 3_600_000), 100, cfg, undefined);
    expect(third.held).toBe(true);
    expect(third.window.destructive).toBe(3);
    expect(third.reasons.join()).toContain('3 deactivations/deletions within 60 min exceed guards.maxDeletes (2)');
  });

  it('a leaver after the window has passed counts alone', async () => {
    const store = new MemoryBurstStore();
    await store.recordApplied(0, { destructive: 2, memberRemovals: 0 });
    const later = 61 * 60_000;
    const v = checkBurst({ destructive: 1, memberRemovals: 0 }, await store.appliedSince(later - 60 * 60_000), 100, cfg, undefined);
    expect(v).toMatchObject({ held: false, window: { destructive: 1 } });
  });

  it('member removals count against maxMemberRemovals; the deletion percentage against the managed objects', () => {
    expect(checkBurst({ destructive: 0, memberRemovals: 4 }, { destructive: 0, memberRemovals: 7 }, 100, cfg, undefined).held).toBe(true);
    const pct = checkBurst({ destructive: 1, memberRemovals: 0 }, { destructive: 1, memberRemovals: 0 }, 3, cfg, undefined);
    expect(pct.reasons.join()).toContain('2 of 3 managed objects (66.7%)');
  });

  it('while a burst is held every destructive change is held, and a change that removes nothing is not', () => {
    const hold = { destructive: 3, memberRemovals: 0, reasons: ['x'], at: 5 };
    expect(checkBurst({ destructive: 1, memberRemovals: 0 }, { destructive: 0, memberRemovals: 0 }, 100, cfg, hold).held).toBe(true);
    expect(checkBurst({ destructive: 0, memberRemovals: 0 }, { destructive: 0, memberRemovals: 0 }, 100, cfg, hold).held).toBe(false);
  });

  it('a full plan under a held burst is held until an approval covers it, and only one no larger', () => {
    const hold = { destructive: 3, memberRemovals: 0, reasons: ['burst'], at: 5 };
    const held = planWith(1);
    expect(enforceBurstHold(held, hold, undefined)).toBe(true);
    expect(held.guard).toMatchObject({ tripped: true, overridden: false });
    expect(held.guard.reasons).toContain('burst');
    const approved = planWith(1);
    expect(enforceBurstHold(approved, hold, { destructive: 1, memberRemovals: 0 })).toBe(false);
    expect(approved.guard).toMatchObject({ tripped: false, overridden: true });
    const larger = planWith(2);
    expect(enforceBurstHold(larger, hold, { destructive: 1, memberRemovals: 0 })).toBe(true);
    expect(enforceBurstHold(planWith(0), hold, undefined)).toBe(false);
    expect(enforceBurstHold(planWith(5), undefined, undefined)).toBe(false);
  });
});

const delta = (over: Partial<SourceDelta>): SourceDelta => ({
  kind: 'delta',
  cursor: 'c',
  users: { upserted: [], removed: [] },
  groups: { upserted: [], removed: [] },
  rejected: [],
  changedAt: {},
  ...over,
});
const user = (externalId: string, givenName: string) => ({ externalId, userName: `${externalId}@example.com`, givenName, active: true }) as never;

describe('coalescing', () => {
  it('the latest complete record of each identity wins; a removal after an upsert removes it; the first change time is kept', () => {
    const a = delta({ cursor: 'c1', users: { upserted: [user('u-1', 'Ann'), user('u-2', 'Bo')], removed: ['u-3'] }, changedAt: { 'u-1': 10 } });
    const b = delta({ cursor: 'c2', users: { upserted: [user('u-1', 'Anne'), user('u-3', 'Cy')], removed: ['u-2'] }, changedAt: { 'u-1': 20, 'u-3': 21 } });
    const m = mergeDeltas(a, b);
    expect(m.cursor).toBe('c2');
    expect(m.users.upserted.map((u) => [u.externalId, u.givenName])).toEqual([
      ['u-1', 'Anne'],
      ['u-3', 'Cy'],
    ]);
    expect(m.users.removed).toEqual(['u-2']);
    expect(m.changedAt).toEqual({ 'u-1': 10, 'u-3': 21 });
  });
});

describe('the full reconcile schedule', () => {
  it('defaults to every 6 hours once changes flow, every 30 minutes otherwise; a set pattern wins', () => {
    const unset = { schedules: { reconcile: { enabled: true } } } as Parameters<typeof reconcilePattern>[0];
    expect(reconcilePattern(unset, true)).toBe('0 */6 * * *');
    expect(reconcilePattern(unset, false)).toBe('*/30 * * * *');
    const set = { schedules: { reconcile: { enabled: true, pattern: '*/10 * * * *' } } } as Parameters<typeof reconcilePattern>[0];
    expect(reconcilePattern(set, true)).toBe('*/10 * * * *');
  });
});
