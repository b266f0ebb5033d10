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

/** Keys whose text may quote a person (an error message, a failed change's ref, an attribute error). */
const FREE_TEXT_KEYS = new Set(['message', 'reason', 'ref', 'name', 'userName', 'externalId', 'value', 'values']);

/**
 * The /status document as the metrics port serves it, to anyone who can reach that port:
 * counts, results, codes and times only. Free text that may quote a person (error messages,
 * failed changes' refs, quarantine reasons) is reduced to its error code or dropped; the
 * signed-in status page and the logs keep it.
 */
export function publicStatus(doc: unknown): unknown {
  if (Array.isArray(doc)) return doc.map(publicStatus);
  if (doc === null || typeof doc !== 'object') return doc;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(doc)) {
    if (FREE_TEXT_KEYS.has(k) && typeof v === 'string') {
      // A message that starts with its error code keeps the code.
      const code = /^E_[A-Z_]+/.exec(v)?.[0];
      if (code !== undefined) out[k] = code;
      continue;
    }
    if (FREE_TEXT_KEYS.has(k) && Array.isArray(v)) continue;
    out[k] = publicStatus(v);
  }
  return out;
}
