/**
 * A one-shot command's run as one trace (`plan`, `apply`, `audit export`, `audit verify`): the
 * SDK started for the command, a root span around it (the engine's own spans — source read,
 * listing, plan, export windows, sink batches, HTTP client spans — below it), and the spans
 * flushed before the process exits. Only loaded when an OTLP endpoint is configured.
 */
import { createLogger } from '../logger.ts';
import { startTracing } from './start.ts';
import { withSpan } from './spans.ts';

export async function runTraced<T>(command: string, fn: () => Promise<T>): Promise<T> {
  // Diagnostics of the exporter only (a collector that refuses spans), on stderr.
  const tracing = await startTracing(createLogger({ level: 'warn' }));
  try {
    return await withSpan(`scim-audit-sync ${command}`, { 'scimsync.command': command }, async (span) => {
      const result = await fn();
      if (typeof result === 'number') span.set({ 'process.exit.code': result });
      return result;
    });
  } finally {
    await tracing?.shutdown();
  }
}
