/**
 * The process-wide Prometheus registry. Domain modules declare their own metrics in their
 * own files (reconcile/metrics.ts, audit/metrics.ts…) and register them here. Names follow
 * `scimsync_<what>_<unit>[_total]`; labels are low-cardinality only (never e-mails or ids).
 */
import { Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { VERSION } from '../version.ts';

export const registry = new Registry();
export const METRIC_PREFIX = 'scimsync_';

/** Always 1; the labels say which build is running (dashboards join on it). */
export const buildInfo = new Gauge({
  name: `${METRIC_PREFIX}build_info`,
  help: 'Build information: always 1, labelled with the package and Node.js versions',
  labelNames: ['version', 'node_version'] as const,
  registers: [registry],
});
buildInfo.set({ version: VERSION, node_version: process.versions.node }, 1);

let defaultsRegistered = false;

/**
 * Registers prom-client's process metrics (CPU, memory, event-loop lag, GC…) under the
 * `scimsync_` prefix. Idempotent: a second registration would throw on duplicate names.
 * Called by the daemon at start-up, not at import, so one-shot CLI runs do not pay for the
 * event-loop monitor.
 */
export function initMetrics(): void {
  // Survives a registry.resetMetrics() in tests.
  buildInfo.set({ version: VERSION, node_version: process.versions.node }, 1);
  if (defaultsRegistered) return;
  collectDefaultMetrics({ register: registry, prefix: METRIC_PREFIX });
  defaultsRegistered = true;
}
