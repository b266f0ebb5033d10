/**
 * `audit verify`: proves that nothing was missed. Each settled window of the range is
 * re-exported (read only: the cursor, the dedupe keys and the sinks are never touched) and its
 * digest compared with the one the export committed. A window whose digests differ is a gap
 * (or events handled twice); with a file sink the differing windows' events are named.
 * What a digest covers, and which windows are compared: docs/audit.md#verify.
 */
import type { PlatformClient } from '../../platform/http-client.ts';
import type { AuditConfig } from '../config-schema.ts';
import { ZERO_HASH, type WindowDigest } from '../digest/window-digest.ts';
import type { AuditStateStore } from '../state/store.ts';
import { alignDown, alignUp } from '../windows.ts';
import { sinkFileKeys } from './sink-file-keys.ts';
import type { SinkDifference, VerifyReport, WindowVerdict } from './verify-types.ts';
import { exportWindowKeys } from './window-keys.ts';

export type { SinkDifference, VerifyReport, WindowVerdict } from './verify-types.ts';

/** Events listed per window and sink in a report; the counts stay exact. */
export const MAX_LISTED_EVENTS = 1000;

export interface VerifyDeps {
  platform: PlatformClient;
  config: AuditConfig;
  tenant: string;
  /** Read with load() only: never acquired, never committed. */
  state: AuditStateStore;
  /** File sinks whose files name the events of a differing window. */
  fileSinks?: Array<{ name: string; path: string }>;
  signal?: AbortSignal;
  onWindow?: (v: WindowVerdict, index: number, count: number) => void;
}

function compareSink(name: string, exported: Map<string, number>, held: Awaited<ReturnType<typeof sinkFileKeys>>): SinkDifference {
  const missing: SinkDifference['missing'] = [];
  let missingCount = 0;
  for (const [key, ts] of exported) {
    if (held.has(key)) continue;
    missingCount++;
    if (missing.length < MAX_LISTED_EVENTS) missing.push({ key, timestamp: new Date(ts).toISOString() });
  }
  const unexpected: SinkDifference['unexpected'] = [];
  let unexpectedCount = 0;
  for (const [key, h] of held) {
    // Not in the export, or written more than once.
    const extra = exported.has(key) ? h.lines - 1 : h.lines;
    if (extra <= 0) continue;
    unexpectedCount += extra;
    if (unexpected.length < MAX_LISTED_EVENTS) unexpected.push({ key, timestamp: new Date(h.ts).toISOString(), lines: h.lines });
  }
  return { sink: name, missingCount, missing, unexpectedCount, unexpected };
}

function verdict(start: number, end: number, recorded: WindowDigest | undefined, exported: WindowDigest): WindowVerdict {
  const rec = recorded ?? { startMs: start, endMs: end, count: 0, hash: ZERO_HASH };
  const same = rec.count === exported.count && rec.hash === exported.hash;
  const diff = exported.count - rec.count;
  return {
    startMs: start,
    endMs: end,
    status: same ? 'match' : 'differs',
    recorded: { count: rec.count, hash: rec.hash },
    exported: { count: exported.count, hash: exported.hash },
    // From the digests alone only the balance is known; equal counts with different hashes
    // mean at least one event missing and one unexpected.
    missing: same ? 0 : Math.max(diff, diff === 0 ? 1 : 0),
    unexpected: same ? 0 : Math.max(-diff, diff === 0 ? 1 : 0),
    exact: same,
  };
}

export async function runAuditVerify(deps: VerifyDeps, opts: { fromMs: number; toMs: number }): Promise<VerifyReport> {
  const st = await deps.state.load();
  const { windowMs, sinceMs, windows } = st.digests;
  const overlapMs = deps.config.overlapMinutes * 60_000;
  const report: VerifyReport = {
    tenant: deps.tenant,
    fromMs: opts.fromMs,
    toMs: opts.toMs,
    windowMs,
    sinceMs,
    cursorMs: st.cursorMs,
    settledBeforeMs: st.cursorMs === null ? null : st.cursorMs - overlapMs,
    windowsChecked: 0,
    windowsMatched: 0,
    windowsDiffering: 0,
    windowsSkipped: 0,
    missing: 0,
    unexpected: 0,
    windows: [],
  };
  if (windowMs === null || sinceMs === null || st.cursorMs === null) return report;
  // Late events may still arrive inside the overlap: only windows the next run will not re-read are compared.
  const settled = st.cursorMs - overlapMs;
  const recorded = new Map(windows.map((w) => [w.startMs, w]));
  const first = alignDown(opts.fromMs, windowMs);
  const last = alignUp(opts.toMs, windowMs);
  const count = Math.max(0, (last - first) / windowMs);
  report.fromMs = first;
  report.toMs = last;
  for (let i = 0, gs = first; gs < last; i++, gs += windowMs) {
    deps.signal?.throwIfAborted();
    const ge = gs + windowMs;
    if (ge <= sinceMs || ge > settled) {
      report.windowsSkipped++;
      continue;
    }
    const start = Math.max(gs, sinceMs);
    const collect = (deps.fileSinks?.length ?? 0) > 0;
    const got = await exportWindowKeys(
      deps.platform,
      deps.config,
      { startMs: start, endMs: ge },
      { gridMs: windowMs, collect, signal: deps.signal },
    );
    const v = verdict(start, ge, recorded.get(gs), got.digest);
    if (v.status === 'differs' && got.keys) {
      v.sinks = [];
      for (const s of deps.fileSinks ?? []) v.sinks.push(compareSink(s.name, got.keys, await sinkFileKeys(s.path, start, ge)));
    }
    report.windowsChecked++;
    if (v.status === 'match') report.windowsMatched++;
    else {
      report.windowsDiffering++;
      report.missing += v.missing;
      report.unexpected += v.unexpected;
      report.windows.push(v);
    }
    deps.onWindow?.(v, i, count);
  }
  return report;
}
