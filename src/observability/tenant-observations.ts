/**
 * What this replica has seen per tenant (last runs, quarantine, held deletes), kept in
 * memory for the /status endpoint. Durable state (cursor, ledger, schedules) lives in Redis
 * and is added by the daemon; this is only the part the instrument already knows.
 */
import type { JobKind, RunResult } from '../reconcile/metrics.ts';

export interface RunRecord {
  result: RunResult;
  /** ISO 8601. */
  finishedAt: string;
  durationSeconds: number;
}

export interface TenantObservation {
  tenant: string;
  lastRun: Partial<Record<JobKind, RunRecord>>;
  /** ISO 8601 time of the last run with result `success`, by job. */
  lastSuccess: Partial<Record<JobKind, string>>;
  quarantined: boolean;
  /** Destructive operations held by the deletion guard in the latest plan. */
  deletesHeld: number;
  managed: { users: number; groups: number } | null;
  /** Source objects the latest plan skipped because their platform match is not managed (not in the ledger). */
  unmanagedSkipped?: { users: number; groups: number };
}

const byTenant = new Map<string, TenantObservation>();

/** The live record for `tenant`, created on first use (only the instrument writes to it). */
export function observation(tenant: string): TenantObservation {
  let o = byTenant.get(tenant);
  if (o === undefined) {
    o = { tenant, lastRun: {}, lastSuccess: {}, quarantined: false, deletesHeld: 0, managed: null };
    byTenant.set(tenant, o);
  }
  return o;
}

/** A deep copy of every tenant seen so far, sorted by tenant, for /status. */
export function observedTenants(): TenantObservation[] {
  return [...byTenant.values()].sort((a, b) => a.tenant.localeCompare(b.tenant)).map((o) => structuredClone(o));
}
