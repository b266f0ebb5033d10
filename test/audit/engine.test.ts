/**
 * The export engine against the simulator over a real socket, into the real file sink:
 * completeness, no duplicates across runs and overlapping windows, late events, ordering,
 * precision and window semantics that the engine must not depend on.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { HOUR, T0, createHarness, duplicates, expectedIds, type Harness } from './support/harness.ts';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const sorted = (xs: string[]): string[] => [...xs].sort();

describe('runAuditExport', () => {
  it('delivers every event of the range exactly once and commits the cursor at the end', async () => {
    h = await createHarness();
    const s = await h.run();
    const expected = expectedIds(h.sim, T0, T0 + 6 * HOUR);
    expect(expected.length).toBeGreaterThan(3000);
    const keys = await h.sinkKeys();
    expect(duplicates(keys)).toEqual([]);
    expect(sorted(keys)).toEqual(sorted(expected));
    expect(sorted(await h.plainKeys())).toEqual(sorted(expected));
    expect(s.windowsPlanned).toBe(6);
    expect(s.windowsDone).toBe(6);
    expect(s.delivered['file']).toBe(expected.length);
    expect(s.cursorMs).toBe(T0 + 6 * HOUR);
    expect((await h.state.load()).cursorMs).toBe(T0 + 6 * HOUR);

    // The same clock again: only the overlap is re-read, and all of it is skipped.
    const again = await h.run();
    expect(again.rangeStartMs).toBe(T0 + 6 * HOUR - 15 * 60_000);
    expect(again.eventsRead).toBeGreaterThan(100);
    expect(again.duplicatesSkipped).toBe(again.eventsRead);
    expect(await h.sinkKeys()).toHaveLength(expected.length);
    expect(await h.plainKeys()).toHaveLength(expected.length);
  });

  it('emits ECS documents with the original columns and normalized fields', async () => {
    h = await createHarness({ nowMs: T0 + HOUR });
    await h.run();
    const [line] = await h.sinkLines();
    const ev = h.sim.audit.eventsIn(new Date(T0).toISOString(), new Date(T0 + HOUR).toISOString()).next().value;
    expect(line).toBeDefined();
    expect(ev).toBeDefined();
    expect(line).toMatchObject({
      _key: ev!.id,
      _ts: ev!.timestampMs,
      '@timestamp': new Date(ev!.timestampMs).toISOString(),
      event: { id: ev!.id, action: ev!.eventName, kind: 'event', dataset: 'platform.audit' },
      user: { email: ev!.userEmail },
      source: { ip: ev!.ipAddress },
      platform: { audit: ev!.fields },
    });
  });

  it('emits plain documents when fieldStyle is plain', async () => {
    h = await createHarness({ nowMs: T0 + HOUR, audit: { fieldStyle: 'plain' } });
    await h.run();
    const [line] = await h.sinkLines();
    const ev = h.sim.audit.eventsIn(new Date(T0).toISOString(), new Date(T0 + HOUR).toISOString()).next().value!;
    expect(line).toMatchObject({
      timestamp: new Date(ev.timestampMs).toISOString(),
      id: ev.id,
      action: ev.eventName,
      email: ev.userEmail,
      ip: ev.ipAddress,
      ...ev.fields,
    });
  });

  it('delivers a late event that lands inside the overlap once, and never again', async () => {
    h = await createHarness();
    await h.run();
    const before = (await h.sinkKeys()).length;
    const late = h.sim.audit.insertLateEvent({ timestamp: h.nowMs - 5 * 60_000, eventName: 'Late event', id: 'late-1' });
    h.nowMs += 10 * 60_000;
    const s2 = await h.run();
    h.nowMs += 10 * 60_000;
    await h.run();
    const keys = await h.sinkKeys();
    expect(keys.filter((k) => k === late.id)).toHaveLength(1);
    expect(duplicates(keys)).toEqual([]);
    expect(s2.delivered['file']).toBeGreaterThanOrEqual(1);
    expect(sorted(keys)).toEqual(sorted(expectedIds(h.sim, T0, h.nowMs)));
    expect(keys.length).toBe(before + expectedIds(h.sim, T0 + 6 * HOUR, h.nowMs).length + 1);
    expect(sorted(await h.plainKeys())).toEqual(sorted(keys));
  });

  it('never duplicates across many overlapping runs, with shared timestamps, desc order and an inclusive end', async () => {
    h = await createHarness({
      sim: {
        audit: { eventsPerHour: 7200, timestampPrecision: 's', order: 'desc', endInclusive: true, startAt: new Date(T0).toISOString() },
      },
      audit: { windowMinutes: 7, overlapMinutes: 15, checkpointEvents: 50 },
      nowMs: T0 + 20 * 60_000,
    });
    for (let i = 0; i < 8; i++) {
      await h.run();
      h.nowMs += 4 * 60_000 + 321;
    }
    const keys = await h.sinkKeys();
    const expected = expectedIds(h.sim, T0, h.nowMs - 4 * 60_000 - 321);
    expect(duplicates(keys)).toEqual([]);
    expect(sorted(keys)).toEqual(sorted(expected));
    const plain = await h.plainKeys();
    expect(duplicates(plain)).toEqual([]);
    expect(sorted(plain)).toEqual(sorted(expected));
  });

  it('exports with date-only precision (whole days requested, filtered client-side)', async () => {
    h = await createHarness({
      audit: { precision: 'date', windowMinutes: 1440 },
      nowMs: T0 + 30 * HOUR,
      sim: { audit: { eventsPerHour: 120 } },
    });
    const s = await h.run();
    expect(s.windowsPlanned).toBe(2);
    const exports = h.sim.requests.filter((r) => r.path === '/api/v1/audit-logs/export');
    expect(
      exports.every((r) => /^\d{4}-\d{2}-\d{2}$/.test(r.query['start'] ?? '') && /^\d{4}-\d{2}-\d{2}$/.test(r.query['end'] ?? '')),
    ).toBe(true);
    h.nowMs += 3 * HOUR;
    await h.run();
    const keys = await h.sinkKeys();
    expect(duplicates(keys)).toEqual([]);
    expect(sorted(await h.plainKeys())).toEqual(sorted(keys));
    expect(sorted(keys)).toEqual(sorted(expectedIds(h.sim, T0, h.nowMs)));
  });

  it('keys events without an id column by a hash that survives re-exports (BOM, CRLF, multi-line cells)', async () => {
    h = await createHarness({
      sim: { audit: { idColumn: false, bom: true, crlf: true, multilineDetailsRate: 0.3 } },
      nowMs: T0 + 2 * HOUR,
    });
    await h.run();
    const first = await h.sinkKeys();
    expect(first).toHaveLength(expectedIds(h.sim, T0, T0 + 2 * HOUR).length);
    expect(first.every((k) => /^[0-9a-f]{64}$/.test(k))).toBe(true);
    // Re-export the last 10 minutes explicitly: every hash is already known.
    const again = await h.run({ from: new Date(h.nowMs - 10 * 60_000) });
    expect(again.eventsRead).toBeGreaterThan(50);
    expect(again.duplicatesSkipped).toBe(again.eventsRead);
    expect(await h.sinkKeys()).toHaveLength(first.length);
    expect(await h.plainKeys()).toHaveLength(first.length);
    const lines = await h.sinkLines();
    expect(lines.some((l) => String((l['platform'] as { audit: Record<string, string> }).audit['Details']).includes('\n'))).toBe(true);
  });

  it('handles columns that appear and disappear (schema drift) without stopping', async () => {
    h = await createHarness({ nowMs: T0 + HOUR });
    await h.run();
    h.sim.audit.setOptions({ dropColumns: ['IP Address'], extraColumns: [{ header: 'Region', value: 'eu-west' }] });
    h.nowMs += HOUR;
    const s = await h.run();
    expect(s.schemaDrift).toEqual([{ added: ['Region'], removed: ['IP Address'] }]);
    const lines = await h.sinkLines();
    const last = lines.at(-1) as { platform: { audit: Record<string, string> }; source?: unknown };
    expect(last.platform.audit['Region']).toBe('eu-west');
    expect(last.source).toBeUndefined();
    expect((await h.state.load()).columns).toContain('Region');
    expect(duplicates(lines.map((l) => l['_key'] as string))).toEqual([]);
    expect(lines).toHaveLength(expectedIds(h.sim, T0, h.nowMs).length);
  });

  it('applies --from/--to and the configured server-side filters', async () => {
    h = await createHarness({ audit: { filters: { eventName: 'Logged in' } } });
    const s = await h.run({ from: new Date(T0 + HOUR), to: new Date(T0 + 3 * HOUR) });
    expect(s.windowsPlanned).toBe(2);
    const keys = await h.sinkKeys();
    const expected = [
      ...h.sim.audit.eventsIn(new Date(T0 + HOUR).toISOString(), new Date(T0 + 3 * HOUR).toISOString(), { eventName: 'Logged in' }),
    ].map((e) => e.id);
    expect(expected.length).toBeGreaterThan(0);
    expect(sorted(keys)).toEqual(sorted(expected));
    expect(h.sim.requests.every((r) => r.query['eventName'] === 'Logged in')).toBe(true);
  });
});
