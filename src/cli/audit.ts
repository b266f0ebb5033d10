/**
 * `scim-audit-sync audit export|status|replay`: the one-shot face of the audit export engine.
 *   audit export --config F [--from ISO] [--to ISO] [--json]   one run (or a backfill), then a summary
 *   audit status --config F [--json]                          cursor, lag, backfill, dead letters
 *   audit replay --config F --sink NAME [--json]              re-deliver a sink's dead letters
 *   audit verify --config F [--from ISO] [--to ISO] [--json]   prove nothing was missed (audit-verify.ts)
 * Exit codes: 0 ok; 1 a run failed or something was dead-lettered / rejected again; 2 config,
 * credential or feature problem (401, 403, feature disabled); 4 verify found a differing window.
 */
import { Command, Option } from 'commander';
import type { LoadedConfig } from '../config/load.ts';
import { ConfigError } from '../errors.ts';
import type { AuditRunSummary } from '../audit/run-audit-export.ts';
import type { AuditRuntime } from '../audit/runtime.ts';
import type { AuditStatus } from '../audit/status.ts';
import type { Logger } from '../observability/logger.ts';
import { auditVerifyCommand } from './audit-verify.ts';
import { ExitCode, runCommand } from './exit-codes.ts';
import { commandLogger, configOption, instantFlag, jsonOption, tenantOption } from './options.ts';
import { paint, printJson, printLines, table } from './output.ts';

interface ExportOptions {
  config: string;
  tenant?: string;
  from?: string;
  to?: string;
  json?: boolean;
}

const iso = (ms: number | null): string => (ms === null ? '(none)' : new Date(ms).toISOString());
const perSink = (r: Record<string, number>): string =>
  Object.entries(r)
    .map(([k, v]) => `${k}=${v}`)
    .join(', ') || '0';

/**
 * `delivered` counts what each sink acknowledged; after a crash part of it was already in the
 * sink (found by its resume scan) and not written again: said on the line, and a `written`
 * line gives what was really written this run.
 */
function deliveredRows(s: AuditRunSummary): Array<[string, string]> {
  const held = Object.entries(s.alreadyHeld).filter(([, n]) => n > 0);
  if (held.length === 0) return [['delivered', perSink(s.delivered)]];
  const delivered = Object.entries(s.delivered)
    .map(([k, v]) => `${k}=${v}${s.alreadyHeld[k] ? ` (${s.alreadyHeld[k]} already held from before a crash)` : ''}`)
    .join(', ');
  const written = Object.fromEntries(Object.entries(s.delivered).map(([k, v]) => [k, v - (s.alreadyHeld[k] ?? 0)]));
  return [
    ['delivered', delivered],
    ['written this run', perSink(written)],
  ];
}

export function renderExportSummary(s: AuditRunSummary): string[] {
  return table([
    ['range', `${iso(s.rangeStartMs)} .. ${iso(s.rangeEndMs)}`],
    ['windows', `${s.windowsDone}/${s.windowsPlanned}${s.windowRetries ? ` (${s.windowRetries} retried)` : ''}`],
    ['events read', String(s.eventsRead)],
    ...deliveredRows(s),
    ['dead-lettered', perSink(s.deadLettered)],
    ['duplicates skipped', String(s.duplicatesSkipped)],
    ['schema drift', s.schemaDrift.map((d) => `+[${d.added.join(', ')}] -[${d.removed.join(', ')}]`).join('; ') || 'none'],
    ['cursor', `${iso(s.previousCursorMs)} -> ${iso(s.cursorMs)}`],
    ['duration', `${(s.durationMs / 1000).toFixed(1)} s`],
  ]);
}

export function renderStatus(st: AuditStatus): string[] {
  return table([
    ['tenant', st.tenant],
    ['state', st.store],
    ['cursor', st.cursor ?? '(none: no export committed yet)'],
    ['lag', st.lagSeconds === null ? '-' : `${st.lagSeconds} s`],
    ['last commit', st.lastCommit ? `${st.lastCommit} (${st.checkpointAgeSeconds} s ago)` : '-'],
    ['overlap keys', String(st.dedupeKeys)],
    ['backfill', st.backfill ? `${(st.backfill.ratio * 100).toFixed(1)}% of ${st.backfill.from} .. ${st.backfill.to}` : 'none'],
    ['dead letters', perSink(st.deadLetters)],
    ['dead-letter store', st.deadLetterStore],
    [
      'verify digests',
      st.digests.since === null ? 'none yet' : `${st.digests.windows} windows of ${st.digests.windowMinutes} min since ${st.digests.since}`,
    ],
  ]);
}

/** Ctrl-C / SIGTERM: stop at the next await; committed progress stays, nothing half-committed. */
function abortOnSignals(): { signal: AbortSignal; dispose(): void } {
  const ac = new AbortController();
  const onSignal = (sig: NodeJS.Signals): void => ac.abort(new Error(`interrupted by ${sig}`));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  return {
    signal: ac.signal,
    dispose: () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}

async function runExport(opts: ExportOptions, cmd: Command): Promise<number> {
  const from = opts.from !== undefined ? new Date(await instantFlag(opts.from, '--from')) : undefined;
  const to = opts.to !== undefined ? new Date(await instantFlag(opts.to, '--to')) : undefined;
  const [{ partialSummary, runAuditExport }, { auditRecorder }, { createAuditProgress }] = await Promise.all([
    import('../audit/run-audit-export.ts'),
    import('../observability/instrument.ts'),
    import('./audit-progress.ts'),
  ]);
  return withRuntime(opts, cmd, async (loaded, rt, logger) => {
    const progress = createAuditProgress({ quiet: opts.json === true });
    const abort = abortOnSignals();
    try {
      let summary: AuditRunSummary;
      try {
        summary = await runAuditExport(
          { ...rt, observer: auditRecorder(rt.tenant, logger), signal: abort.signal, onProgress: (p) => progress.update(p) },
          { ...(from ? { from } : {}), ...(to ? { to } : {}) },
        );
      } catch (e) {
        progress.stop();
        const partial = partialSummary(e);
        if (partial && !opts.json)
          printLines(
            ['audit export stopped; progress up to the cursor below is committed:', ...renderExportSummary(partial).map((l) => `  ${l}`)],
            process.stderr,
          );
        throw e;
      }
      progress.stop();
      const deadLettered = Object.values(summary.deadLettered).reduce((a, b) => a + b, 0);
      // stdout belongs to a `stdout` sink's NDJSON when one is configured: the report goes to stderr.
      const out = loaded.config.audit?.sinks.some((s) => s.type === 'stdout') ? process.stderr : process.stdout;
      if (opts.json) printJson(summary, out);
      else printLines([paint('green', 'audit export finished', out), ...renderExportSummary(summary).map((l) => `  ${l}`)], out);
      return deadLettered > 0 ? ExitCode.FAILED : ExitCode.OK;
    } finally {
      abort.dispose();
    }
  });
}

/**
 * The runtime of one command, with the Redis connection the config asks for (opened and closed here).
 * The engine loads here, when a subcommand runs: `--help` does not load it.
 */
async function withRuntime<T>(
  opts: { config: string; tenant?: string },
  cmd: Command,
  fn: (loaded: LoadedConfig, rt: AuditRuntime, logger: Logger) => Promise<T>,
): Promise<T> {
  const [{ loadConfig }, { openAuditRedis }, { buildAuditRuntime }] = await Promise.all([
    import('../config/load.ts'),
    import('./audit-redis.ts'),
    import('../audit/runtime.ts'),
  ]);
  const loaded = await loadConfig(opts.config, process.env, { tenant: opts.tenant });
  const logger = commandLogger(cmd, loaded);
  const redis = await openAuditRedis(loaded);
  try {
    const rt = buildAuditRuntime(loaded, logger, redis ? { redis } : {});
    try {
      return await fn(loaded, rt, logger);
    } finally {
      await rt.close();
    }
  } finally {
    await redis?.close();
  }
}

export function auditCommand(): Command {
  const audit = new Command('audit').description('stream the platform audit log into SIEM sinks: export, status, replay dead letters');
  audit
    .command('export')
    .description('export new audit events (cursor − overlap .. now − settle) into every sink; a backfill when there is no cursor yet')
    .addOption(configOption())
    .addOption(tenantOption())
    .addOption(new Option('--from <iso>', 'start here instead of at the cursor (re-export or manual backfill)'))
    .addOption(new Option('--to <iso>', 'stop here instead of now − settle'))
    .addOption(jsonOption())
    .action(runCommand((opts: ExportOptions, cmd: Command) => runExport(opts, cmd)));
  audit
    .command('status')
    .description('show the cursor, the lag, backfill progress and dead-letter counts')
    .addOption(configOption())
    .addOption(tenantOption())
    .addOption(jsonOption())
    .action(
      runCommand((opts: { config: string; json?: boolean }, cmd: Command) =>
        withRuntime(opts, cmd, async (_loaded, rt, logger) => {
          const [{ auditStatus }, { auditRecorder }] = await Promise.all([
            import('../audit/status.ts'),
            import('../observability/instrument.ts'),
          ]);
          const st = await auditStatus({ ...rt, observer: auditRecorder(rt.tenant, logger) });
          if (opts.json) printJson(st);
          else printLines(renderStatus(st));
          return ExitCode.OK;
        }),
      ),
    );
  audit
    .command('replay')
    .description("re-deliver a sink's dead-lettered events to that sink; events rejected again stay dead-lettered")
    .addOption(configOption())
    .addOption(tenantOption())
    .addOption(new Option('--sink <name>', 'the sink whose dead letters to replay').makeOptionMandatory())
    .addOption(new Option('--batch-size <n>', 'events per write').default('500'))
    .addOption(jsonOption())
    .action(
      runCommand((opts: { config: string; sink: string; batchSize: string; json?: boolean }, cmd: Command) =>
        withRuntime(opts, cmd, async (_loaded, rt, logger) => {
          const [{ replayDeadLetters }, { auditRecorder }] = await Promise.all([
            import('../audit/replay.ts'),
            import('../observability/instrument.ts'),
          ]);
          const batchSize = Number(opts.batchSize);
          if (!Number.isInteger(batchSize) || batchSize < 1)
            throw new ConfigError(`--batch-size must be a positive integer, got ${opts.batchSize}`);
          const r = await replayDeadLetters({ ...rt, logger, observer: auditRecorder(rt.tenant, logger) }, opts.sink, { batchSize });
          if (opts.json) printJson(r);
          else
            printLines(
              table([
                ['sink', r.sink],
                ['taken', String(r.taken)],
                ['delivered', String(r.delivered)],
                ['rejected again', String(r.rejectedAgain)],
                ['kept (no event)', String(r.kept)],
              ]),
            );
          return r.rejectedAgain > 0 ? ExitCode.FAILED : ExitCode.OK;
        }),
      ),
    );
  audit.addCommand(auditVerifyCommand());
  return audit;
}
