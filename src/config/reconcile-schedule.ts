/**
 * The full reconcile's schedule when `schedules.reconcile.pattern` is not set: every 30 minutes,
 * or every 6 hours once the tenant's changes flow (its source reports them and
 * provisioning.changes is on). Changes then reach the platform within seconds; the full
 * reconcile repairs drift and what the change mechanism cannot see. A set pattern always wins.
 */
import type { Config } from './schema.ts';

export const DEFAULT_RECONCILE_PATTERN = '*/30 * * * *';
export const CHANGE_DRIVEN_RECONCILE_PATTERN = '0 */6 * * *';

export function reconcilePattern(cfg: Pick<Config, 'schedules'>, changesFlow: boolean): string {
  return cfg.schedules.reconcile.pattern ?? (changesFlow ? CHANGE_DRIVEN_RECONCILE_PATTERN : DEFAULT_RECONCILE_PATTERN);
}
