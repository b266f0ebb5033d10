/** `scim-audit-sync daemon --config F`: the long-running service (scheduling, workers, /metrics, /healthz, /readyz, /status). */
import { Command } from 'commander';
import { loadAllTenants } from '../config/load.ts';
import { runCommand } from './exit-codes.ts';
import { commandLogger, configOption } from './options.ts';

export function daemonCommand(): Command {
  return new Command('daemon')
    .description('run the scheduled reconcile and audit-export workers with the metrics/health HTTP server (needs Redis)')
    .addOption(configOption())
    .action(
      runCommand(async (opts: { config: string }, cmd: Command) => {
        const all = await loadAllTenants(opts.config);
        const logger = commandLogger(cmd, all[0]);
        // Loaded on demand: one-shot commands never pay for BullMQ and the workers.
        const { buildDaemon } = await import('../app.ts');
        const daemon = buildDaemon(all, { logger });
        await daemon.start();
        await new Promise<void>((resolve) => {
          let stopping = false;
          const stop = (signal: string): void => {
            if (stopping) return;
            stopping = true;
            logger.info({ signal }, 'signal received');
            void daemon.close().then(resolve, (e: unknown) => {
              logger.error({ err: (e as Error).message }, 'error during shutdown');
              resolve();
            });
          };
          process.once('SIGTERM', () => stop('SIGTERM'));
          process.once('SIGINT', () => stop('SIGINT'));
        });
        return 0;
      }),
    );
}
