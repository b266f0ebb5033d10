/**
 * One export run straight from a loaded config: build the runtime, run the engine, close
 * everything. For the demo and scripts; the CLI and the daemon use the pieces directly.
 */
import type { LoadedConfig } from '../config/load.ts';
import type { Logger } from '../observability/logger.ts';
import type { AuditObserver } from './observer.ts';
import { runAuditExport, type AuditProgress, type AuditRunOptions, type AuditRunSummary } from './run-audit-export.ts';
import { buildAuditRuntime, type AuditRuntimeOptions } from './runtime.ts';

export interface AuditOutput {
  sink: string;
  type: string;
  /** Where a file sink writes (absolute), so a caller can point the user at it. */
  path?: string;
}

export interface RunFromConfigOptions extends AuditRunOptions, AuditRuntimeOptions {
  signal?: AbortSignal;
  onProgress?: (p: AuditProgress) => void;
  observer?: AuditObserver;
  /** Wall clock, epoch ms (test seam). */
  now?: () => number;
}

export async function runAuditFromConfig(
  loaded: LoadedConfig,
  logger: Logger,
  opts: RunFromConfigOptions = {},
): Promise<{ summary: AuditRunSummary; outputs: AuditOutput[] }> {
  const rt = buildAuditRuntime(loaded, logger, opts);
  try {
    const summary = await runAuditExport(
      {
        ...rt,
        ...(opts.observer ? { observer: opts.observer } : {}),
        ...(opts.signal ? { signal: opts.signal } : {}),
        ...(opts.onProgress ? { onProgress: opts.onProgress } : {}),
        ...(opts.now ? { now: opts.now } : {}),
      },
      { ...(opts.from ? { from: opts.from } : {}), ...(opts.to ? { to: opts.to } : {}) },
    );
    const outputs = rt.sinks.map((s) => {
      const path = (s as { path?: unknown }).path;
      return { sink: s.name, type: s.type, ...(typeof path === 'string' ? { path } : {}) };
    });
    return { summary, outputs };
  } finally {
    await rt.close();
  }
}
