import { describe, expect, it } from 'vitest';
import { DAY_MS, planRange, planWindows, requestFor } from '../../src/audit/windows.ts';
import { buildExportQuery } from '../../src/platform/audit-export.ts';

const T = Date.parse('2026-11-01T00:00:00Z');
const M = 60_000;

describe('windows', () => {
  it('cuts a range on a fixed grid without gaps or overlaps', () => {
    const ws = planWindows(T + 50 * M, T + 200 * M, 60 * M);
    expect(ws).toEqual([
      { startMs: T + 50 * M, endMs: T + 60 * M },
      { startMs: T + 60 * M, endMs: T + 120 * M },
      { startMs: T + 120 * M, endMs: T + 180 * M },
      { startMs: T + 180 * M, endMs: T + 200 * M },
    ]);
    expect(planWindows(T, T, 60 * M)).toEqual([]);
  });

  it('plans [cursor − overlap, min(to, now − settle)), or the backfill start without a cursor', () => {
    const base = { nowMs: T + 600 * M, overlapMs: 15 * M, settleMs: 2 * M };
    expect(planRange({ ...base, cursorMs: T + 300 * M })).toEqual({ startMs: T + 285 * M, endMs: T + 598 * M });
    expect(planRange({ ...base, cursorMs: T + 300 * M, toMs: T + 400 * M })).toEqual({ startMs: T + 285 * M, endMs: T + 400 * M });
    expect(planRange({ ...base, cursorMs: null, backfillFromMs: T })).toEqual({ startMs: T, endMs: T + 598 * M });
    expect(planRange({ ...base, cursorMs: null })).toEqual({ startMs: T + 583 * M, endMs: T + 598 * M });
    expect(planRange({ ...base, cursorMs: T + 300 * M, fromMs: T + 10 * M })).toEqual({ startMs: T + 10 * M, endMs: T + 598 * M });
  });

  it('widens requests to whole units so neither precision nor end-inclusivity can lose events', () => {
    expect(requestFor({ startMs: T + 1500, endMs: T + 61_250 }, 'datetime')).toEqual({ startMs: T, endMs: T + 63_000 });
    const d = requestFor({ startMs: T + 5 * M, endMs: T + DAY_MS + 5 * M }, 'date');
    expect(d).toEqual({ startMs: T, endMs: T + 2 * DAY_MS });
    expect(buildExportQuery({ ...d, precision: 'date', eventName: 'Logged in' })).toEqual({
      start: '2026-11-01',
      end: '2026-11-03',
      eventName: 'Logged in',
    });
    expect(buildExportQuery({ startMs: T, endMs: T + 63_000, precision: 'datetime' })).toEqual({
      start: '2026-11-01T00:00:00Z',
      end: '2026-11-01T00:01:03Z',
    });
  });
});
