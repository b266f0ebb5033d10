/**
 * The audit export engine: one run exports `[cursor − overlap, min(to, now − settle))` in
 * bounded windows, delivers every new event to every sink, and commits the cursor with the
 * overlap keys after each window (and at checkpoints inside it) once all sinks acknowledged.
 * Used unchanged by the one-shot CLI, the daemon, the demo and the benchmark: no CLI or
 * queue concerns here. The algorithm and its guarantees are described in docs/audit.md.
 */
import { hostname } from 'node:os';
import { isSyncError } from '../errors.ts';
import { backoffDelay, sleep } from '../platform/retry.ts';
import { isFatalExportError } from '../platform/audit-export.ts';
import { parseInstant, windowRetryPolicy } from './config-schema.ts';
import { DedupeSet } from './dedupe-set.ts';
import { SinkFailedError, type SinkLane } from './fan-out.ts';
import { ignoreAuditEvents } from './observer.ts';
import { RunContext } from './run-context.ts';
import type { AuditEngineDeps, AuditRunOptions, AuditRunSummary } from './run-types.ts';
import { alignUp, planRange, planWindows, type ExportWindow } from './windows.ts';
import { WindowPass } from './window-pass.ts';

export type { AuditEngineDeps, AuditRunOptions, AuditRunSummary, AuditProgress } from './run-types.ts';
export type { AuditEngineEvent, AuditObserver } from './observer.ts';

function emptySummary(tenant: string, cursorMs: number | null): AuditRunSummary {
  return {
    tenant,
    rangeStartMs: 0,
    rangeEndMs: 0,
    windowsPlanned: 0,
    windowsDone: 0,
    rowsRead: 0,
    eventsRead: 0,
    duplicatesSkipped: 0,
    parseErrors: 0,
    delivered: {},
    alreadyHeld: {},
    deadLettered: {},
    schemaDrift: [],
    windowRetries: 0,
    previousCursorMs: cursorMs,
    cursorMs,
    durationMs: 0,
  };
}

/** The stable code of a window's failure, for the metric: never free text. */
function failureCode(e: unknown): string {
  if (isSyncError(e)) return e.code;
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^E_[A-Z_]+$/.test(code) ? code : 'E_UNEXPECTED';
}

/**
 * After a failed attempt, the keys of what it delivered are committed without moving the
 * cursor: whatever the next attempt (or the next run) reads again of this window is skipped
 * by key, and nothing of the failed response counts as read. Best effort: when the state
 * store itself fails, the attempt's own error is the one reported.
 */
async function commitDelivered(ctx: RunContext, w: ExportWindow, startMs: number): Promise<void> {
  if (ctx.dedupe.pendingCount === 0) return;
  try {
    await ctx.checkpoint(ctx.cursorMs ?? startMs, w.startMs, w.endMs, 'checkpoint');
  } catch {
    // The keys stay pending (restored by checkpoint()); a retry in this run still skips them.
  }
}

/** Retry a window after a transient failure, starting again at the committed cursor − overlap. */
async function runWindow(ctx: RunContext, deps: AuditEngineDeps, w: ExportWindow): Promise<void> {
  const { retry } = ctx.config;
  const policy = windowRetryPolicy(retry);
  for (let attempt = 1; ; attempt++) {
    // A retry does not redo progress an earlier attempt committed (keys ≥ cursor − overlap are
    // known). A window of a `--from` re-export below the cursor is read whole on every attempt:
    // the cursor never tracked it.
    const reexport = w.startMs < ctx.exportedBeforeMs;
    const startMs =
      attempt === 1 || reexport || ctx.cursorMs === null ? w.startMs : Math.max(w.startMs, Math.min(w.endMs, ctx.cursorMs - ctx.overlapMs));
    try {
      if (attempt > 1) await ctx.reloadKeys();
      await new WindowPass(ctx, { startMs, endMs: w.endMs }).run(deps.platform);
      return;
    } catch (e) {
      // Aborted (Ctrl-C, job cancelled): say so, not the stream error the abort caused.
      if (ctx.signal?.aborted) throw ctx.signal.reason ?? e;
      ctx.observer({ type: 'window-failed', code: failureCode(e), windowStartMs: w.startMs });
      if (!(e instanceof SinkFailedError)) await commitDelivered(ctx, w, startMs);
      if (e instanceof SinkFailedError || isFatalExportError(e) || attempt >= policy.maxAttempts) throw e;
      const retryAfterSeconds = isSyncError(e) ? e.retryAfterSeconds : undefined;
      const delayMs = backoffDelay(policy, attempt, retryAfterSeconds === undefined ? undefined : retryAfterSeconds * 1000);
      ctx.summary.windowRetries++;
      ctx.observer({
        type: 'window-retry',
        attempt,
        delayMs,
        code: isSyncError(e) ? e.code : undefined,
        message: (e as Error).message,
        windowStartMs: w.startMs,
      });
      await sleep(delayMs, ctx.signal);
    }
  }
}

async function loadHeldKeys(deps: AuditEngineDeps, sinceMs: number): Promise<SinkLane[]> {
  return Promise.all(
    deps.sinks.map(async (sink) => ({
      sink,
      held: sink.recentKeys ? await sink.recentKeys(sinceMs) : undefined,
    })),
  );
}

const partial = new WeakMap<object, AuditRunSummary>();

/** What a failed run had done before it failed (committed progress stays committed). */
export function partialSummary(e: unknown): AuditRunSummary | undefined {
  return typeof e === 'object' && e !== null ? partial.get(e) : undefined;
}

export async function runAuditExport(deps: AuditEngineDeps, opts: AuditRunOptions = {}): Promise<AuditRunSummary> {
  const now = deps.now ?? Date.now;
  const started = now();
  const { config, tenant, state } = deps;
  const manageSinks = deps.manageSinks ?? true;
  const observer = deps.observer ?? ignoreAuditEvents;
  await state.acquire(deps.owner ?? `${hostname()}:${process.pid}`);
  const opened: typeof deps.sinks = [];
  let summary: AuditRunSummary | undefined;
  try {
    const st = await state.load();
    observer({ type: 'state', cursorMs: st.cursorMs, updatedAtMs: st.updatedAtMs, nowMs: started });
    summary = emptySummary(tenant, st.cursorMs);
    const range = planRange({
      cursorMs: st.cursorMs,
      nowMs: started,
      overlapMs: config.overlapMinutes * 60_000,
      settleMs: config.settleSeconds * 1000,
      backfillFromMs: config.backfill.from ? parseInstant(config.backfill.from) : undefined,
      fromMs: opts.from?.getTime(),
      toMs: opts.to?.getTime(),
    });
    summary.rangeStartMs = range.startMs;
    summary.rangeEndMs = Math.max(range.startMs, range.endMs);
    const windows = planWindows(range.startMs, range.endMs, config.windowMinutes * 60_000);
    summary.windowsPlanned = windows.length;
    if (windows.length === 0) {
      summary.durationMs = now() - started;
      return summary;
    }
    if (manageSinks) {
      for (const sink of deps.sinks) {
        await sink.open();
        opened.push(sink);
      }
    }
    const lanes = await loadHeldKeys(deps, range.startMs);
    const backfill =
      windows.length > 1
        ? { fromMs: st.backfill?.fromMs ?? range.startMs, toMs: range.endMs, startedAtMs: st.backfill?.startedAtMs ?? started }
        : st.backfill;
    // Digests start (again) where they can cover every handled event: at the range's start on a
    // first run, else at the first window boundary from the cursor (events before it were
    // handled by runs that recorded no digest, or on another grid).
    const windowMs = config.windowMinutes * 60_000;
    const digestReset =
      st.digests.windowMs === windowMs ? undefined : { sinceMs: st.cursorMs === null ? range.startMs : alignUp(st.cursorMs, windowMs) };
    const ctx = new RunContext({
      tenant,
      config,
      state,
      deadLetters: deps.deadLetters,
      lanes,
      dedupe: new DedupeSet(st.dedupe),
      cursorMs: st.cursorMs,
      columns: st.columns,
      backfill,
      rangeStartMs: range.startMs,
      rangeEndMs: range.endMs,
      now,
      observer,
      signal: deps.signal,
      onProgress: deps.onProgress,
      summary,
      digestReset,
    });
    ctx.windowCount = windows.length;
    observer({ type: 'run-started', fromMs: range.startMs, toMs: range.endMs, windows: windows.length, cursorMs: st.cursorMs });
    const minIntervalMs = config.backfill.maxWindowsPerMinute > 0 ? 60_000 / config.backfill.maxWindowsPerMinute : 0;
    let lastWindowAt = Number.NEGATIVE_INFINITY;
    for (let i = 0; i < windows.length; i++) {
      const w = windows[i] as ExportWindow;
      const wait = lastWindowAt + minIntervalMs - now();
      if (wait > 0) await sleep(wait, deps.signal);
      lastWindowAt = now();
      ctx.windowIndex = i;
      ctx.progress('window-start', w.startMs, w.endMs);
      await runWindow(ctx, deps, w);
    }
    summary.durationMs = now() - started;
    const { tenant: _tenant, ...fields } = summary;
    observer({ type: 'run-finished', summary: { ...fields, schemaDrift: summary.schemaDrift.length } });
    return summary;
  } catch (e) {
    if (summary && typeof e === 'object' && e !== null) {
      summary.durationMs = now() - started;
      partial.set(e, summary);
    }
    throw e;
  } finally {
    for (const sink of opened.reverse())
      await sink.close().catch((e: unknown) => observer({ type: 'sink-close-failed', sink: sink.name, message: (e as Error).message }));
    await state.release();
  }
}
