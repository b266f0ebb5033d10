/**
 * `audit verify` against the simulator: the export records a digest per window as it commits;
 * verify re-exports and names the windows that differ. A `drop-events` fault makes the platform
 * lose events from one window, either on the export (verify finds them missing) or on the
 * verify's own re-export (verify finds the recorded ones unexpected).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { auditStatus } from '../../src/audit/status.ts';
import { runAuditVerify, type VerifyReport } from '../../src/audit/verify/run-verify.ts';
import { createHarness, expectedIds, HOUR, T0, type Harness } from './support/harness.ts';

const EXPORT = '/api/v1/audit-logs/export';
const iso = (ms: number): string => new Date(ms).toISOString();

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function verify(x: Harness, fromMs = T0, toMs = T0 + 24 * HOUR): Promise<VerifyReport> {
  return runAuditVerify(
    { platform: x.platform, config: x.config, tenant: x.tenant, state: x.state, fileSinks: [{ name: 'file', path: x.sinkPath }] },
    { fromMs, toMs },
  );
}

for (const store of ['file', 'redis'] as const) {
  describe(`audit verify (${store} state)`, () => {
    it('every settled window matches after a backfill, runs that cut windows in pieces and a late event in the overlap', async () => {
      h = await createHarness({ redis: store === 'redis', nowMs: T0 + 2.5 * HOUR });
      await h.run();
      h.nowMs = T0 + 4 * HOUR + 10 * 60_000;
      await h.run();
      h.sim.audit.insertLateEvent({ timestamp: h.nowMs - 5 * 60_000, id: 'late-in-overlap' });
      h.nowMs = T0 + 6 * HOUR;
      await h.run();
      const r = await verify(h);
      // Cursor T0+6h, overlap 15 min: the windows ending by T0+5h45 are settled.
      expect(r.windowsChecked).toBe(5);
      expect(r.windowsDiffering).toBe(0);
      expect(r.missing).toBe(0);
      const st = await h.state.load();
      const recorded = st.digests.windows.reduce((n, w) => n + w.count, 0);
      expect(recorded).toBe(expectedIds(h.sim, T0, T0 + 6 * HOUR).length);
      const status = await auditStatus({ tenant: h.tenant, state: h.state, deadLetters: h.deadLetters });
      expect(status.digests).toEqual({ since: iso(T0), windowMinutes: 60, windows: 6 });
    });

    it('a window the first export lost events from is reported with its missing count, and the file sink names the events', async () => {
      h = await createHarness({ redis: store === 'redis', plain: false });
      const lostFrom = T0 + 2 * HOUR + 10 * 60_000;
      const lostTo = T0 + 2 * HOUR + 20 * 60_000;
      const lost = expectedIds(h.sim, lostFrom, lostTo);
      expect(lost.length).toBeGreaterThan(50);
      h.sim.setFaults([{ kind: 'drop-events', pathPrefix: EXPORT, dropFrom: iso(lostFrom), dropTo: iso(lostTo), times: 1 }]);
      await h.run();
      h.sim.setFaults([]);
      const r = await verify(h);
      expect(r.windowsDiffering).toBe(1);
      const [w] = r.windows;
      expect(w?.startMs).toBe(T0 + 2 * HOUR);
      expect(w?.missing).toBe(lost.length);
      expect(w?.unexpected).toBe(0);
      const sink = w?.sinks?.[0];
      expect(sink?.missingCount).toBe(lost.length);
      expect(sink?.missing.map((e) => e.key).sort()).toEqual([...lost].sort());
      expect(sink?.unexpectedCount).toBe(0);
      // Verify reads only: the cursor did not move and the sink got nothing.
      const before = await h.sinkKeys();
      const again = await verify(h);
      expect(again.windowsDiffering).toBe(1);
      expect(await h.sinkKeys()).toEqual(before);
    });

    it('events the platform drops from the verify re-export are reported unexpected', async () => {
      h = await createHarness({ redis: store === 'redis', plain: false });
      await h.run();
      const from = T0 + 3 * HOUR;
      const gone = expectedIds(h.sim, from, from + 5 * 60_000);
      h.sim.setFaults([{ kind: 'drop-events', pathPrefix: EXPORT, dropFrom: iso(from), dropTo: iso(from + 5 * 60_000) }]);
      const r = await verify(h);
      expect(r.windowsDiffering).toBe(1);
      expect(r.windows[0]?.startMs).toBe(from);
      expect(r.windows[0]?.unexpected).toBe(gone.length);
      expect(r.windows[0]?.missing).toBe(0);
      expect(r.windows[0]?.sinks?.[0]?.unexpected.map((e) => e.key).sort()).toEqual([...gone].sort());
    });

    it('a --from re-export below the cursor delivers the events again and leaves every window matching (nothing is counted twice)', async () => {
      h = await createHarness({ redis: store === 'redis', plain: {} });
      const first = await h.run();
      const once = await h.plainKeys();
      expect(once.length).toBeGreaterThan(0);
      const again = await h.run({ from: new Date(T0) });
      // The non-idempotent sink receives every event of the re-exported range a second time,
      // but the events still in the overlap set, which the cursor's run already holds.
      const twice = await h.plainKeys();
      expect(twice.length).toBeGreaterThan(once.length);
      expect(new Set(twice)).toEqual(new Set(once));
      expect(again.cursorMs).toBe(first.cursorMs);
      const r = await verify(h);
      expect(r.windowsChecked).toBe(5);
      expect(r.windowsDiffering).toBe(0);
    });
  });
}

describe('audit verify, digest start', () => {
  it('a state with a cursor but no digests (an earlier release) starts them at the next window boundary', async () => {
    h = await createHarness({ plain: false, nowMs: T0 + 2.5 * HOUR });
    await h.run();
    // Forget the digests, as a state written before they existed.
    const st = await h.state.load();
    expect(st.digests.sinceMs).toBe(T0);
    const { FileAuditStateStore } = await import('../../src/audit/state/file-store.ts');
    const { writeFile, readFile } = await import('node:fs/promises');
    const { join } = await import('node:path');
    const snap = join(h.dir, 'state', h.tenant, 'audit', 'state.json');
    const store = new FileAuditStateStore(join(h.dir, 'state'), h.tenant);
    await store.acquire('test');
    await store.load(); // folds the journal into the snapshot
    await store.release();
    const json = JSON.parse(await readFile(snap, 'utf8')) as Record<string, unknown>;
    delete json['digests'];
    await writeFile(snap, JSON.stringify(json));
    h.nowMs = T0 + 6 * HOUR;
    await h.run();
    const after = await h.state.load();
    expect(after.digests.sinceMs).toBe(T0 + 3 * HOUR);
    const r = await verify(h);
    expect(r.windowsChecked).toBe(2);
    expect(r.windowsDiffering).toBe(0);
  });
});
