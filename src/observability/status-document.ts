/**
 * The /status JSON: what the instrument observed per tenant (last runs, quarantine, held
 * deletes, managed objects) merged with what the daemon reads from Redis (next schedule,
 * audit cursor and lag). Operators read it; nothing parses it, but keys are only added.
 */
import { VERSION } from '../version.ts';
import { observedTenants, type TenantObservation } from './tenant-observations.ts';

/** Per-tenant facts only the daemon knows, e.g. `{ nextRun: { reconcile: iso }, audit: auditStatus(...) }`. */
export type TenantExtra = Record<string, unknown>;

export interface StatusDocument {
  version: string;
  /** ISO 8601. */
  generatedAt: string;
  /** Observations of this replica; other replicas report their own. */
  tenants: (TenantObservation & TenantExtra)[];
}

/** `extra` is keyed by tenant; a tenant the instrument has not seen yet still appears. */
export function statusDocument(extra: Record<string, TenantExtra> = {}, now: number = Date.now()): StatusDocument {
  const seen = new Map(observedTenants().map((o) => [o.tenant, o] as const));
  const names = [...new Set([...seen.keys(), ...Object.keys(extra)])].sort();
  return {
    version: VERSION,
    generatedAt: new Date(now).toISOString(),
    tenants: names.map((tenant) => ({
      ...(seen.get(tenant) ?? { tenant, lastRun: {}, lastSuccess: {}, quarantined: false, deletesHeld: 0, managed: null }),
      ...extra[tenant],
      tenant,
    })),
  };
}
