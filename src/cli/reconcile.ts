/**
 * `scim-audit-sync plan --config F [--json] [--only USER] [--out plan.json]` and
 * `scim-audit-sync apply --config F [--json] [--allow-deletes] [--only USER | --plan plan.json]`.
 */
import { Command, Option } from 'commander';
import { ConfigError, ErrorCodes } from '../errors.ts';
import type { BuiltReconcileContext } from '../reconcile/from-config.ts';
import type { PlannedReconcile } from '../reconcile/engine.ts';
import type { PlanFileOptions } from '../reconcile/plan-file.ts';
import type { Logger } from '../observability/logger.ts';
import type { Plan } from '../reconcile/plan-types.ts';
import type { ApplyResult } from '../reconcile/apply.ts';
import { ExitCode, runCommand } from './exit-codes.ts';
import { commandLogger, configOption, jsonOption, tenantOption } from './options.ts';
import { streamJson } from './output.ts';

interface ReconcileOptions {
  config: string;
  tenant?: string;
  json?: boolean;
  allowDeletes?: boolean;
  concurrency?: string;
  /** plan: write the reviewed plan here. */
  out?: string;
  /** apply: execute this saved plan. */
  plan?: string;
  only?: string;
}

const onlyOption = (): Option =>
  new Option(
    '--only <userName|externalId>',
    'provision on demand: restrict to one user and their memberships (never deprovisions anyone else)',
  );

export function planCommand(): Command {
  return new Command('plan')
    .description(
      'show what apply would change (read-only): users and groups to create, update, deactivate, delete; members to add and remove',
    )
    .addOption(configOption())
    .addOption(tenantOption())
    .addOption(jsonOption())
    .addOption(new Option('--allow-deletes', 'evaluate the plan as if the deletion guard were overridden'))
    .addOption(onlyOption())
    .addOption(new Option('--out <file>', 'save the plan for review; `apply --plan FILE` then runs exactly it'))
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
    .addOption(onlyOption())
    .addOption(
      new Option(
        '--plan <file>',
        'apply exactly this saved plan (from `plan --out`); refuses (exit 2) if the platform or the source changed it since',
      ),
    )
    .action(runCommand((opts: ReconcileOptions, cmd: Command) => run(opts, cmd, true)));
}

/** The full plan, restricted to one user with --only. */
async function planFor(ctx: BuiltReconcileContext, options: PlanFileOptions, logger: Logger): Promise<PlannedReconcile> {
  const [{ planReconcile }, { warnIfAllUnmanaged }, { restrictPlan }] = await Promise.all([
    import('../reconcile/engine.ts'),
    import('../reconcile/ownership.ts'),
    import('../reconcile/selection.ts'),
  ]);
  const planned = await planReconcile(ctx, { allowDeletes: options.allowDeletes });
  warnIfAllUnmanaged(planned.plan, ctx.ledgerStore.describe, logger);
  if (options.only === undefined) return planned;
  const { plan, matched } = restrictPlan(planned.plan, { only: options.only }, options.allowDeletes);
  if (!matched)
    logger.warn(
      { only: options.only },
      `--only ${options.only}: no change or skip names this user; it is in sync, or no user has this userName or externalId in the source or on the platform`,
    );
  return { ...planned, plan };
}

async function run(opts: ReconcileOptions, cmd: Command, apply: boolean): Promise<number> {
  // Loaded when the command runs, not with the module: `--help` and `--version` stay small (src/cli/program.ts).
  const [
    { loadConfig },
    { applyReconcile },
    { buildReconcileContext },
    { firstLines, planDrift, readPlanFile, toPlanFile, writePlanFile },
    { renderApplyResult, renderPlan },
  ] = await Promise.all([
    import('../config/load.ts'),
    import('../reconcile/engine.ts'),
    import('../reconcile/from-config.ts'),
    import('../reconcile/plan-file.ts'),
    import('../reconcile/render.ts'),
  ]);
  const loaded = await loadConfig(opts.config, process.env, { tenant: opts.tenant });
  const tty = process.stdout.isTTY === true && !opts.json;
  // A human at a terminal gets the table and a progress bar; change lines go to the log (stderr).
  const logger = commandLogger(cmd, loaded);
  const saved = apply && opts.plan !== undefined ? await readPlanFile(opts.plan) : undefined;
  if (saved && (opts.only !== undefined || opts.allowDeletes)) {
    throw new ConfigError('--plan carries its own options', [
      `--plan: the plan was made with ${JSON.stringify(saved.options)}; drop --only/--allow-deletes, or make a new plan with them`,
    ]);
  }
  const options: PlanFileOptions = saved?.options ?? {
    allowDeletes: opts.allowDeletes === true,
    ...(opts.only !== undefined ? { only: opts.only } : {}),
  };
  // plan runs on a read-only client: a write attempted on its path fails with E_READ_ONLY, unsent.
  const ctx = await buildReconcileContext(loaded, logger, apply ? {} : { readOnly: true });
  const target = `${ctx.platform.baseUrl.origin}${ctx.platform.resolvePath(loaded.config.platform.scimPath.replace(/\/+$/, ''))}`;
  try {
    if (saved && (saved.tenant !== loaded.config.tenant || saved.target !== target)) {
      throw new ConfigError(`${opts.plan} was made for another target`, [
        `--plan: made for tenant ${saved.tenant} at ${saved.target}, this config is tenant ${loaded.config.tenant} at ${target}`,
      ]);
    }
    let planned = await planFor(ctx, options, logger);
    logger.info(
      { summary: planned.plan.summary, guard: planned.plan.guard, timings: planned.timings },
      apply ? 'plan computed, applying' : 'plan computed',
    );
    if (!apply) {
      const { plan } = planned;
      if (opts.out !== undefined) await writePlanFile(opts.out, toPlanFile(plan, target, options));
      if (opts.json) await streamJson(plan);
      else process.stdout.write(`${renderPlan(plan, { color: tty })}\n`);
      if (opts.out !== undefined)
        process.stderr.write(`plan saved to ${opts.out}; review it, then run: scim-audit-sync apply --plan ${opts.out}\n`);
      return plan.guard.tripped ? ExitCode.GUARD : ExitCode.OK;
    }
    if (saved) {
      const drift = planDrift(saved, planned.plan);
      if (drift.blocking.length > 0) {
        process.stderr.write(
          `error [${ErrorCodes.CONFIG_INVALID}]: the platform or the source changed since ${opts.plan} was made; nothing was applied. Run plan --out again and review it.\n${firstLines(
            drift.blocking,
          )
            .map((l) => `  - ${l}`)
            .join('\n')}\n`,
        );
        return ExitCode.CONFIG;
      }
      if (drift.notReviewed.length > 0) {
        process.stderr.write(
          `not in the reviewed plan, left for the next plan:\n${firstLines(drift.notReviewed)
            .map((l) => `  - ${l}`)
            .join('\n')}\n`,
        );
      }
      planned = { ...planned, plan: saved.plan };
    }
    const { plan } = planned;
    if (!opts.json) process.stdout.write(`${renderPlan(plan, { color: tty })}\n\n`);
    // What only an apply uses.
    const [{ createProgress }, { finishLocalLog, localProvisioningLog }] = await Promise.all([
      import('./progress.ts'),
      import('../provisioning-log/local.ts'),
    ]);
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
    if (opts.json) await streamJson({ plan, result });
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
