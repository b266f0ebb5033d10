/** `scim-audit-sync daemon --config F`: the long-running service (scheduling, workers, /metrics, /healthz, /readyz, /status). */
import { Command } from 'commander';
import type { LoadedConfig } from '../config/load.ts';
import { createLogger, type Logger } from '../observability/logger.ts';
import { runCommand } from './exit-codes.ts';
import { configOption, globalOptions, logSettings } from './options.ts';

/** No process-wide `tenant` field: the job loggers bind their own tenant (a shared one would repeat or contradict it). */
function daemonLogger(cmd: Command, all: LoadedConfig[]): Logger {
  const g = globalOptions(cmd);
  // A daemon in a terminal is being watched: readable lines, but every level it is configured for.
  const { pretty } = logSettings(g, 'info');
  return createLogger({ level: g.logLevel ?? (g.debug ? 'debug' : (all[0]?.config.logging.level ?? 'info')), pretty });
}

/**
 * Everything is closed: the process exits on its own once its output is flushed. Should a
 * client library still hold a reconnect timer (one Redis never answered), it exits anyway
 * shortly after, instead of outliving its stop until the pod is killed.
 */
function exitSoon(): void {
  setTimeout(() => process.exit(), 2_000).unref(); // ms
}

export function daemonCommand(): Command {
  return new Command('daemon')
    .description('run the scheduled reconcile and audit-export workers with the metrics/health HTTP server (needs Redis)')
    .addOption(configOption())
    .action(
      runCommand(async (opts: { config: string }, cmd: Command) => {
        const [{ loadAllTenants }, { assertPreflight }, { importOneShotLedgers }] = await Promise.all([
          import('../config/load.ts'),
          import('./preflight.ts'),
          import('./ledger-auto-import.ts'),
        ]);
        const all = await loadAllTenants(opts.config);
        const logger = daemonLogger(cmd, all);
        // Off unless an OTLP endpoint is configured (OTEL_EXPORTER_OTLP_ENDPOINT): nothing is loaded then.
        const { startTracing } = await import('../observability/tracing/start.ts');
        const tracing = await startTracing(logger);
        // A sink, source or platform setting that would fail at run time stops the start (exit 2).
        await assertPreflight(all, logger);
        // Loaded on demand: one-shot commands never pay for BullMQ and the workers.
        const { buildDaemon } = await import('../app.ts');
        const daemon = buildDaemon(all, {
          logger,
          // Moving from one-shot to the daemon: a state.dir ledger fills an empty Redis ledger
          // once, after the HTTP port is bound and Redis answers.
          whenRedisReady: async () => void (await importOneShotLedgers(all, logger)),
        });
        // Installed before the start: a daemon still waiting for Redis stops on SIGTERM too.
        let stopping = false;
        const stopped = new Promise<void>((resolve) => {
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
        try {
          await daemon.start();
        } catch (e) {
          if (stopping) {
            await stopped;
            await tracing?.shutdown();
            exitSoon();
            return 0;
          }
          // Workers and Redis connections may already be up: close them, or the process would
          // stay alive (and keep taking jobs) after reporting the error.
          await daemon.close().catch(() => undefined);
          await tracing?.shutdown();
          exitSoon();
          throw e;
        }
        await stopped;
        // The spans of the last runs leave before the process does.
        await tracing?.shutdown();
        exitSoon();
        return 0;
      }),
    );
}
