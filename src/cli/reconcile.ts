/**
 * `scim-audit-sync plan --config F [--json] [--only USER] [--out plan.json] [--fail-on-rejected]` and
 * `scim-audit-sync apply --config F [--json] [--allow-deletes] [--only USER | --plan plan.json] [--yes] [--fail-on-rejected]`.
 */
import { Command, Option } from 'commander';
import { ConfigError, ErrorCodes } from '../errors.ts';
import type { BuiltReconcileContext } from '../reconcile/from-config.ts';
import type { PlannedReconcile } from '../reconcile/engine.ts';
import type { PlanFileOptions } from '../reconcile/plan-file.ts';
import type { PlanBasis } from '../reconcile/plan-basis.ts';
import type { Logger } from '../observability/logger.ts';
import type { Plan } from '../reconcile/plan-types.ts';
import type { ApplyResult } from '../reconcile/apply.ts';
import { printable } from '../observability/printable.ts';
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
  /** apply: do not ask for confirmation on a terminal. */
  yes?: boolean;
  failOnRejected?: boolean;
}

const onlyOption = (): Option =>
  new Option(
    '--only <userName|externalId>',
    'provision on demand: restrict to one user and their memberships (never deprovisions anyone else); exit 2 when no user has this userName or externalId',
  );

const failOnRejectedOption = (): Option =>
  new Option(
    '--fail-on-rejected',
    'exit 4 when the source rejected entries (or user-attribute values) or an identity conflict held a newcomer, after planning/applying the rest',
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
    .addOption(failOnRejectedOption())
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
        'apply exactly this saved plan (from `plan --out`); refuses (exit 2) if an object it touches changed on the platform or in the source since',
      ),
    )
    .addOption(new Option('-y, --yes', 'apply without asking (on a terminal, apply shows the plan and asks first)'))
    .addOption(failOnRejectedOption())
    .action(runCommand((opts: ReconcileOptions, cmd: Command) => run(opts, cmd, true)));
}

/**
 * The plan (restricted to one user with --only) and, with `basisOf`, the basis of a plan (the
 * fresh one, or a saved one read again) from the inputs it was made from. The inputs end here:
 * an apply never holds the source's and the platform's objects next to its own work.
 */
async function planFor(
  ctx: BuiltReconcileContext,
  options: PlanFileOptions,
  logger: Logger,
  basisOf?: 'fresh' | Plan,
): Promise<{ planned: PlannedReconcile; basis: PlanBasis | undefined }> {
  const [{ planReconcile }, { warnIfAllUnmanaged }, { restrictPlan, selects }, { createPlanProgress }, { planBasis }] = await Promise.all([
    import('../reconcile/engine.ts'),
    import('../reconcile/ownership.ts'),
    import('../reconcile/selection.ts'),
    import('./plan-progress.ts'),
    import('../reconcile/plan-basis.ts'),
  ]);
  const progress = createPlanProgress(ctx.source.describe);
  let full: PlannedReconcile;
  try {
    full = await planReconcile(ctx, {
      allowDeletes: options.allowDeletes,
      keepInputs: basisOf !== undefined || options.only !== undefined,
      onProgress: (p) => progress.update(p),
    });
  } finally {
    progress.stop();
  }
  const { inputs, ...planned } = full;
  warnIfAllUnmanaged(planned.plan, ctx.ledgerStore.describe, logger);
  if (options.only !== undefined) {
    const sel = { only: options.only };
    const { plan, matched } = restrictPlan(planned.plan, sel, options.allowDeletes);
    if (!matched) {
      const known =
        inputs === undefined ||
        inputs.sourceUsers.some((u) => selects(sel, u)) ||
        inputs.platformUsers.some((u) => selects(sel, u)) ||
        planned.plan.rejected.some((r) => selects(sel, r));
      if (!known) {
        throw new ConfigError(`--only ${options.only} matches no user`, [
          `--only: no user in the source (kept or rejected) or on the platform has the userName or externalId ${JSON.stringify(options.only)}; nothing was planned`,
        ]);
      }
      const why = plan.rejected.length > 0 ? "the source rejected this user's entry (see the plan)" : 'this user is in sync';
      logger.warn({ only: options.only }, `--only ${options.only}: ${why}; nothing to do`);
    }
    planned.plan = plan;
  }
  const basis = basisOf !== undefined && inputs ? planBasis(basisOf === 'fresh' ? planned.plan : basisOf, inputs) : undefined;
  return { planned, basis };
}

/** Source entries (and user-attribute values) the source rejected: left out of the plan, shown in its headline. */
/** What `--fail-on-rejected` counts: rejected entries and values, and newcomers held by an identity conflict. */
function rejectedCount(plan: Plan): number {
  return plan.summary.rejected + (plan.attributes?.summary.rejected ?? 0) + (plan.summary.conflicts ?? 0);
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
  // On a terminal, apply asks before it writes (a saved plan was reviewed already, as in Terraform).
  const ask = apply && saved === undefined && opts.yes !== true && process.stdin.isTTY === true;
  if (ask && opts.json) {
    throw new ConfigError('apply --json on a terminal needs --yes', [
      '--yes: with --json, apply cannot show the plan and ask; pass --yes (or apply a reviewed plan with --plan)',
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
    const basisOf = saved !== undefined ? saved.plan : !apply && opts.out !== undefined ? 'fresh' : undefined;
    const fresh = await planFor(ctx, options, logger, basisOf);
    let planned = fresh.planned;
    logger.info(
      { summary: planned.plan.summary, guard: planned.plan.guard, timings: planned.timings },
      apply ? 'plan computed, applying' : 'plan computed',
    );
    const rejected = rejectedCount(planned.plan);
    const rejectedExit = (code: number): number =>
      code === ExitCode.OK && opts.failOnRejected === true && rejected > 0 ? ExitCode.REJECTED : code;
    if (!apply) {
      const { plan } = planned;
      if (opts.out !== undefined) await writePlanFile(opts.out, toPlanFile(plan, target, options, fresh.basis ?? {}));
      if (opts.json) await streamJson(plan);
      else process.stdout.write(`${renderPlan(plan, { color: tty })}\n`);
      if (opts.out !== undefined)
        process.stderr.write(`plan saved to ${opts.out}; review it, then run: scim-audit-sync apply --plan ${opts.out}\n`);
      return rejectedExit(plan.guard.tripped ? ExitCode.GUARD : ExitCode.OK);
    }
    if (saved) {
      const drift = planDrift(saved, planned.plan, fresh.basis ?? {});
      if (drift.blocking.length > 0) {
        process.stderr.write(
          `error [${ErrorCodes.CONFIG_INVALID}]: the plan is stale: the platform or the source changed since ${opts.plan} was made; nothing was applied. Run plan --out again and review it.\n${firstLines(
            drift.blocking,
          )
            .map((l) => `  - ${printable(l)}`)
            .join('\n')}\n`,
        );
        return ExitCode.CONFIG;
      }
      if (drift.notReviewed.length > 0) {
        process.stderr.write(
          `not in the reviewed plan, left for the next plan:\n${firstLines(drift.notReviewed)
            .map((l) => `  - ${printable(l)}`)
            .join('\n')}\n`,
        );
      }
      planned = { ...planned, plan: saved.plan };
    }
    const { plan } = planned;
    if (!opts.json) process.stdout.write(`${renderPlan(plan, { color: tty })}\n\n`);
    if (ask && plan.summary.changes > 0) {
      const { confirm } = await import('./confirm.ts');
      const yes = await confirm(
        `Apply these ${plan.summary.changes} changes to tenant ${printable(plan.tenant)} at ${target}? Only 'yes' is accepted: `,
      );
      if (!yes) {
        process.stderr.write('Apply cancelled: nothing was changed.\n');
        return ExitCode.FAILED;
      }
    }
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
    else process.stdout.write(`${renderApplyResult(result, { color: tty }, plan)}\n`);
    if (plan.guard.tripped) process.stderr.write(guardMessage(plan));
    return rejectedExit(exitFor(plan, result));
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
  // A user-attribute error (wrong-type definition, refused API) is a failure the operator must fix.
  return result.failed.length > 0 || (plan.attributes?.errors.length ?? 0) > 0 ? ExitCode.FAILED : ExitCode.OK;
}
