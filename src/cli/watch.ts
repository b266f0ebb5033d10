/**
 * `scim-audit-sync watch --config F`: the change path in the foreground, without Redis, for
 * small deployments and demos. A full reconcile first (the source's first answer is a full
 * read), then every change the source reports is applied within seconds (docs/daemon.md,
 * "Change-driven sync"); what the change path cannot decide alone, and every later full read,
 * runs a full reconcile in the same process. State (ownership ledger, provisioning log) is
 * the state directory's, as for `apply`. Ctrl-C (SIGINT) or SIGTERM stops it between rounds.
 * Destructive changes the guard holds stay held until `apply --allow-deletes`.
 */
import { Command } from 'commander';
import { runCommand } from './exit-codes.ts';
import { commandLogger, configOption, tenantOption } from './options.ts';

interface WatchOptions {
  config: string;
  tenant?: string;
}

export function watchCommand(): Command {
  return new Command('watch')
    .description(
      'apply source changes as they come, in the foreground and without Redis (a full reconcile first; for small deployments and demos)',
    )
    .addOption(configOption())
    .addOption(tenantOption())
    .action(runCommand((opts: WatchOptions, cmd: Command) => watch(opts, cmd)));
}

async function watch(opts: WatchOptions, cmd: Command): Promise<number> {
  const [
    { loadConfig },
    { buildReconcileContext },
    { planReconcile, applyReconcile },
    { ChangeLoop },
    { MemoryBurstStore, enforceBurstHold },
    { supportsChanges },
    { finishLocalLog, localProvisioningLog },
    { applyPlan },
    { sleep },
    { ConfigError },
  ] = await Promise.all([
    import('../config/load.ts'),
    import('../reconcile/from-config.ts'),
    import('../reconcile/engine.ts'),
    import('../reconcile/changes/change-loop.ts'),
    import('../reconcile/changes/burst-guard.ts'),
    import('../sources/changes.ts'),
    import('../provisioning-log/local.ts'),
    import('../reconcile/apply.ts'),
    import('../platform/retry.ts'),
    import('../errors.ts'),
  ]);
  const loaded = await loadConfig(opts.config, process.env, { tenant: opts.tenant });
  const logger = commandLogger(cmd, loaded);
  const ctx = await buildReconcileContext(loaded, logger);
  try {
    const source = ctx.source;
    if (!ctx.config.changes.enabled || !supportsChanges(source)) {
      throw new ConfigError(`watch needs a source that reports its changes (${source.describe} does not, as configured)`, [
        ctx.config.changes.enabled
          ? 'provisioning.source: use a source with a change mechanism (docs/sources.md, "Change detection"), or run apply on a schedule'
          : 'provisioning.changes.enabled: set it to true',
      ]);
    }
    const stop = new AbortController();
    const onSignal = (signal: string): void => {
      if (stop.signal.aborted) return;
      logger.info({ signal }, 'watch: stopping');
      stop.abort(new Error('stopped'));
    };
    process.once('SIGINT', () => onSignal('SIGINT'));
    process.once('SIGTERM', () => onSignal('SIGTERM'));
    const burst = new MemoryBurstStore();
    const applyOptions = {
      concurrency: ctx.config.apply.concurrency,
      requestsPerSecond: ctx.config.apply.requestsPerSecond,
      adoptExisting: ctx.config.matching.adoptExisting,
    };
    let fullWanted: string | undefined;

    const fullReconcile = async (reason: string): Promise<void> => {
      const planned = await planReconcile({ ...ctx, signal: stop.signal }, { allowDeletes: false });
      enforceBurstHold(planned.plan, await burst.hold(), undefined);
      const log = localProvisioningLog(loaded, logger);
      log.planned(planned.plan);
      const result = await applyReconcile({ ...ctx, signal: stop.signal }, planned, { onChange: log.onChange });
      await finishLocalLog(log, loaded, logger);
      if (!planned.plan.guard.tripped) await burst.clear();
      else
        logger.warn(
          { reasons: planned.plan.guard.reasons },
          'watch: deletion guard tripped; destructive changes are held (run apply --allow-deletes once they are checked)',
        );
      logger.info({ reason, summary: planned.plan.summary, failed: result.failed.length }, 'watch: full reconcile finished');
    };

    const loop = new ChangeLoop({
      tenant: ctx.tenant,
      source,
      config: ctx.config,
      target: ctx.scim.readOnly(),
      attributes: ctx.attributes,
      ledgerStore: ctx.ledgerStore,
      cursor: { load: async () => undefined, save: async () => undefined },
      burst,
      writer: {
        // One process, one loop: a batch and a full reconcile never run at once.
        exclusive: (work) => work({ signal: stop.signal, assertHeld: async () => undefined }),
        apply: async (plan, ledger, scope) => {
          const log = localProvisioningLog(loaded, logger);
          log.planned(plan);
          const result = await applyPlan(
            plan,
            { target: ctx.target, ledger, ledgerStore: ctx.ledgerStore, attributes: ctx.attributes },
            {
              ...applyOptions,
              signal: scope.signal,
              onChange: log.onChange,
            },
          );
          await finishLocalLog(log, loaded, logger);
          const writes = Object.values(result.succeeded).reduce((a, b) => a + (b ?? 0), 0);
          return { writes, failed: result.failed.length };
        },
      },
      requestFull: async (code) => {
        fullWanted ??= code;
      },
      logger,
    });
    logger.info(
      { source: source.describe, mechanism: source.changeMechanism()?.name, pollIntervalMs: loop.pollIntervalMs },
      'watch: started',
    );
    while (!stop.signal.aborted) {
      let failed = false;
      try {
        await loop.pollOnce(stop.signal);
        if (fullWanted !== undefined) {
          const reason = fullWanted;
          fullWanted = undefined;
          await fullReconcile(reason);
        }
      } catch (e) {
        if (stop.signal.aborted) break;
        logger.warn({ err: e instanceof Error ? e.message : String(e) }, 'watch: this round failed; the next one asks again');
        failed = true;
      }
      await sleep(loop.untilNextPoll(failed), stop.signal).catch(() => undefined);
    }
    logger.info('watch: stopped');
    return 0;
  } finally {
    await ctx.close();
  }
}
