/**
 * `scim-audit-sync plan --config F [--json]` and
 * `scim-audit-sync apply --config F [--json] [--allow-deletes]`.
 */
import { Command, Option } from 'commander';
import { loadConfig } from '../config/load.ts';
import { ErrorCodes } from '../platform/errors.ts';
import { applyReconcile, planReconcile } from '../reconcile/engine.ts';
import { buildReconcileContext } from '../reconcile/from-config.ts';
import type { Plan } from '../reconcile/plan-types.ts';
import type { ApplyResult } from '../reconcile/apply.ts';
import { renderApplyResult, renderPlan } from '../reconcile/render.ts';
import { ExitCode, runCommand } from './exit-codes.ts';
import { commandLogger, configOption, jsonOption, tenantOption } from './options.ts';
import { printJson } from './output.ts';
import { createProgress } from './progress.ts';
import { finishLocalLog, localProvisioningLog } from '../provisioning-log/local.ts';

interface ReconcileOptions {
  config: string;
  tenant?: string;
  json?: boolean;
  allowDeletes?: boolean;
  concurrency?: string;
}

export function planCommand(): Command {
  return new Command('plan')
    .description('show what apply would change (read-only): users and groups to create, update, deactivate, delete; members to add and remove')
    .addOption(configOption())
    .addOption(tenantOption())
    .addOption(jsonOption())
    .addOption(new Option('--allow-deletes', 'evaluate the plan as if the deletion guard were overridden'))
    .action(runCommand((opts: ReconcileOptions, cmd: Command) => run(opts, cmd, false)));
}

export function applyCommand(): Command {
  return new Command('apply')
    .description('make the platform match the source; destructive changes are held when the deletion guard trips (exit 3)')
    .addOption(configOption())
    .addOption(tenantOption())
    .addOption(jsonOption())
    .addOption(new Option('--allow-deletes', 'override the deletion guard for this run'))
    .addOption(new Option('--concurrency <n>', 'parallel requests (default: provisioning.apply.concurrency)'))
    .action(runCommand((opts: ReconcileOptions, cmd: Command) => run(opts, cmd, true)));
}

async function run(opts: ReconcileOptions, cmd: Command, apply: boolean): Promise<number> {
  const loaded = await loadConfig(opts.config, process.env, { tenant: opts.tenant });
  const tty = process.stdout.isTTY === true && !opts.json;
  // A human at a terminal gets the table and a progress bar; change lines go to the log (stderr).
  const logger = commandLogger(cmd, loaded);
  const ctx = buildReconcileContext(loaded, logger);
  try {
    const planned = await planReconcile(ctx, { allowDeletes: opts.allowDeletes === true });
    const { plan } = planned;
    logger.info({ summary: plan.summary, guard: plan.guard, timings: planned.timings }, apply ? 'plan computed, applying' : 'plan computed');
    if (!apply) {
      if (opts.json) printJson(plan);
      else process.stdout.write(`${renderPlan(plan, { color: tty })}\n`);
      return plan.guard.tripped ? ExitCode.GUARD : ExitCode.OK;
    }
    if (!opts.json) process.stdout.write(`${renderPlan(plan, { color: tty })}\n\n`);
    const provisioningLog = localProvisioningLog(loaded, logger);
    provisioningLog.planned(plan);
    const progress = createProgress({ label: 'apply' });
    const concurrency = opts.concurrency !== undefined ? Number(opts.concurrency) : undefined;
    const result = await applyReconcile(ctx, planned, {
      ...(concurrency !== undefined && Number.isInteger(concurrency) && concurrency > 0 ? { concurrency } : {}),
      onProgress: (p) => progress.update(p),
      onChange: (c) => {
        provisioningLog.onChange(c);
        if (c.result === 'ok') logger.info({ change: c }, c.action);
        else logger.warn({ change: c }, `${c.action} failed`);
      },
    });
    progress.stop();
    await finishLocalLog(provisioningLog, loaded, logger);
    if (opts.json) printJson({ plan, result });
    else process.stdout.write(`${renderApplyResult(result, { color: tty })}\n`);
    if (plan.guard.tripped) process.stderr.write(guardMessage(plan));
    return exitFor(plan, result);
  } finally {
    await ctx.close();
  }
}

function guardMessage(plan: Plan): string {
  return `deletion guard tripped [${ErrorCodes.GUARD_TRIPPED}]: ${plan.guard.reasons.join('; ')}. Destructive changes were held; re-run with --allow-deletes if they are intended.\n`;
}

export function exitFor(plan: Plan, result: ApplyResult): number {
  if (result.aborted !== undefined) {
    const fatal = result.failed.find((f) => f.code === ErrorCodes.AUTH_INVALID || f.code === ErrorCodes.AUTH_FORBIDDEN);
    return fatal ? ExitCode.CONFIG : ExitCode.FAILED;
  }
  if (plan.guard.tripped) return ExitCode.GUARD;
  // [h17] A user-attribute error (wrong-type definition, refused API) is a failure the operator must fix.
  return result.failed.length > 0 || (plan.attributes?.errors.length ?? 0) > 0 ? ExitCode.FAILED : ExitCode.OK;
}
