/**
 * `scim-audit-sync audit verify --config F [--from ISO] [--to ISO] [--json]`: re-export the
 * range and compare each settled window with the digest the export committed (docs/audit.md#verify).
 * Read only: the cursor, the dedupe keys and the sinks are never touched.
 * Exit codes: 0 every window matches; 4 a window differs (a gap, or events handled twice);
 * 1 the verify itself failed; 2 config, credential or feature problem.
 */
import { Command, Option } from 'commander';
import type { VerifyReport, WindowVerdict } from '../audit/verify/run-verify.ts';
import { ConfigError } from '../errors.ts';
import { ExitCode, runCommand } from './exit-codes.ts';
import { commandLogger, configOption, instantFlag, jsonOption, tenantOption } from './options.ts';
import { paint, printJson, printLines } from './output.ts';

/** Events named per window and sink in the text output (`--json` lists up to MAX_LISTED_EVENTS). */
const TEXT_LISTED = 20;
const DEFAULT_SPAN_MS = 24 * 3_600_000;

const iso = (ms: number | null): string => (ms === null ? '(none)' : new Date(ms).toISOString());

function windowLines(v: WindowVerdict): string[] {
  const exact = v.exact ? '' : ' (from the digests: at least)';
  const lines = [
    `${iso(v.startMs)} .. ${iso(v.endMs)}: recorded ${v.recorded.count}, platform ${v.exported.count}: missing ${v.missing}, unexpected ${v.unexpected}${exact}`,
  ];
  for (const s of v.sinks ?? []) {
    lines.push(`  sink ${s.sink}: ${s.missingCount} missing, ${s.unexpectedCount} unexpected`);
    for (const e of s.missing.slice(0, TEXT_LISTED)) lines.push(`    missing    ${e.timestamp} ${e.key}`);
    if (s.missingCount > TEXT_LISTED) lines.push(`    … ${s.missingCount - TEXT_LISTED} more missing (--json lists them)`);
    for (const e of s.unexpected.slice(0, TEXT_LISTED))
      lines.push(`    unexpected ${e.timestamp} ${e.key}${e.lines > 1 ? ` (${e.lines} lines)` : ''}`);
    if (s.unexpectedCount > TEXT_LISTED) lines.push(`    … ${s.unexpectedCount - TEXT_LISTED} more unexpected (--json lists them)`);
  }
  return lines;
}

export function renderVerify(r: VerifyReport): string[] {
  if (r.windowMs === null) return ['audit verify: no window digests recorded yet (run `audit export` first); nothing to compare'];
  const head =
    r.windowsDiffering === 0
      ? paint('green', `audit verify: ${r.windowsChecked} windows match`, process.stdout)
      : paint(
          'red',
          `audit verify: ${r.windowsDiffering} of ${r.windowsChecked} windows differ (missing ${r.missing}, unexpected ${r.unexpected})`,
          process.stdout,
        );
  return [
    head,
    `  range ${iso(r.fromMs)} .. ${iso(r.toMs)}; digests since ${iso(r.sinceMs)}; settled before ${iso(r.settledBeforeMs)}${r.windowsSkipped ? `; ${r.windowsSkipped} windows skipped (before the digests start, or not settled)` : ''}`,
    ...r.windows.flatMap((v) => windowLines(v).map((l) => `  ${l}`)),
  ];
}

interface VerifyCliOptions {
  config: string;
  tenant?: string;
  from?: string;
  to?: string;
  json?: boolean;
}

async function runVerify(opts: VerifyCliOptions, cmd: Command): Promise<number> {
  const toMs = opts.to !== undefined ? await instantFlag(opts.to, '--to') : Date.now();
  const fromMs = opts.from !== undefined ? await instantFlag(opts.from, '--from') : toMs - DEFAULT_SPAN_MS;
  if (fromMs >= toMs) throw new ConfigError('--from must be before --to');
  const [{ loadConfig }, { openAuditRedis }, { buildAuditRuntime }, { runAuditVerify }] = await Promise.all([
    import('../config/load.ts'),
    import('./audit-redis.ts'),
    import('../audit/runtime.ts'),
    import('../audit/verify/run-verify.ts'),
  ]);
  const loaded = await loadConfig(opts.config, process.env, { tenant: opts.tenant });
  const logger = commandLogger(cmd, loaded);
  const redis = await openAuditRedis(loaded);
  try {
    const rt = buildAuditRuntime(loaded, logger, redis ? { redis } : {});
    try {
      const fileSinks = rt.sinks.flatMap((s) => {
        const path = (s as { path?: unknown }).path;
        return s.type === 'file' && typeof path === 'string' ? [{ name: s.name, path }] : [];
      });
      const report = await runAuditVerify(
        { platform: rt.platform, config: rt.config, tenant: rt.tenant, state: rt.state, fileSinks },
        { fromMs, toMs },
      );
      if (opts.json) printJson(report);
      else printLines(renderVerify(report));
      return report.windowsDiffering > 0 ? ExitCode.AUDIT_GAP : ExitCode.OK;
    } finally {
      await rt.close();
    }
  } finally {
    await redis?.close();
  }
}

export function auditVerifyCommand(): Command {
  return new Command('verify')
    .description('re-export a range and compare each window with what was delivered; exit 5 when a window differs')
    .addOption(configOption())
    .addOption(tenantOption())
    .addOption(new Option('--from <iso>', 'start of the range (widened to whole windows); default 24 hours before --to'))
    .addOption(new Option('--to <iso>', 'end of the range; default now (windows not settled yet are skipped)'))
    .addOption(jsonOption())
    .action(runCommand((opts: VerifyCliOptions, cmd: Command) => runVerify(opts, cmd)));
}
