/**
 * The audit export engine: one run exports `[cursor − overlap, min(to, now − settle))` in
 * bounded windows, delivers every new event to every sink, and commits the cursor with the
 * overlap keys after each window (and at checkpoints inside it) once all sinks acknowledged.
 * Used unchanged by the one-shot CLI, the daemon, the demo and the benchmark: no CLI or
 * queue concerns here. The algorithm and its guarantees are described in docs/audit.md.
 */
import { hostname } from 'node:os';
import { isSyncError } from '../platform/errors.ts';
import { backoffDelay, sleep } from '../platform/retry.ts';
import { isFatalExportError } from '../platform/audit-export.ts';
import { parseInstant } from './config-schema.ts';
import { DedupeSet } from './dedupe-set.ts';
import { SinkFailedError, type SinkLane } from './fan-out.ts';
import { auditMetrics, updateAuditGauges } from './metrics.ts';
import { RunContext } from './run-context.ts';
import type { AuditEngineDeps, AuditRunOptions, AuditRunSummary } from './run-types.ts';
import { planRange, planWindows, type ExportWindow } from './windows.ts';
import { WindowPass } from './window-pass.ts';
import { parseMode } from './csv/read-csv.ts';

export type { AuditEngineDeps, AuditRunOptions, AuditRunSummary, AuditProgress } from './run-types.ts';

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

/** Retry a window after a transient failure, starting again at the committed cursor − overlap. */
async function runWindow(ctx: RunContext, deps: AuditEngineDeps, w: ExportWindow): Promise<void> {
  const { retry } = ctx.config;
  const policy = { maxAttempts: retry.windowAttempts, baseDelayMs: retry.baseDelayMs, maxDelayMs: retry.maxDelayMs, maxRetryAfterMs: retry.maxDelayMs };
  for (let attempt = 1; ; attempt++) {
    // Progress committed by an earlier attempt is not redone (keys ≥ cursor − overlap are known).
    const startMs = ctx.cursorMs === null ? w.startMs : Math.max(w.startMs, Math.min(w.endMs, ctx.cursorMs - ctx.overlapMs));
    try {
      await new WindowPass(ctx, { startMs, endMs: w.endMs }).run(deps.platform);
      return;
    } catch (e) {
      if (ctx.signal?.aborted || e instanceof SinkFailedError || isFatalExportError(e) || attempt >= policy.maxAttempts) throw e;
      const retryAfterSeconds = isSyncError(e) ? e.retryAfterSeconds : undefined;
      const delayMs = backoffDelay(policy, attempt, retryAfterSeconds === undefined ? undefined : retryAfterSeconds * 1000);
      ctx.summary.windowRetries++;
      auditMetrics.windowRetries.inc({ tenant: ctx.tenant });
      ctx.logger?.warn({ attempt, delayMs, code: isSyncError(e) ? e.code : undefined, err: (e as Error).message, windowStart: new Date(w.startMs).toISOString() }, 'audit export window failed, retrying');
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
  await state.acquire(deps.owner ?? `${hostname()}:${process.pid}`);
  const opened: typeof deps.sinks = [];
  let summary: AuditRunSummary | undefined;
  try {
    const st = await state.load();
    updateAuditGauges(tenant, st.cursorMs, st.updatedAtMs, started);
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
    const backfill = windows.length > 1 ? { fromMs: st.backfill?.fromMs ?? range.startMs, toMs: range.endMs, startedAtMs: st.backfill?.startedAtMs ?? started } : st.backfill;
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
      logger: deps.logger,
      signal: deps.signal,
      onProgress: deps.onProgress,
      summary,
    });
    ctx.windowCount = windows.length;
    deps.logger?.info({ from: new Date(range.startMs).toISOString(), to: new Date(range.endMs).toISOString(), windows: windows.length, cursor: st.cursorMs === null ? null : new Date(st.cursorMs).toISOString(), csvParse: parseMode() }, 'audit export run starting');
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
    deps.logger?.info({ ...fields, schemaDrift: summary.schemaDrift.length }, 'audit export run finished');
    return summary;
  } catch (e) {
    if (summary && typeof e === 'object' && e !== null) {
      summary.durationMs = now() - started;
      partial.set(e, summary);
    }
    throw e;
  } finally {
    for (const sink of opened.reverse()) await sink.close().catch((e: unknown) => deps.logger?.error({ err: (e as Error).message, sink: sink.name }, 'audit sink close failed'));
    await state.release();
  }
}
