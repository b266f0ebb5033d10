/** Filters of `scim-audit-sync log` and the status page's search, applied the same way by both stores. */
import type { ProvisioningRecord, RecordResult } from './record.ts';

export interface LogQuery {
  /** Case-insensitive substring of the object's externalId, name (userName / displayName) or platform id, or of a member name. */
  user?: string;
  /** Epoch ms: records at or after. */
  sinceMs?: number;
  /** Exact action (`user.create`) or a resource prefix (`user`, `group`). */
  action?: string;
  result?: RecordResult;
  /** Most records returned, newest first. */
  limit: number;
}

export function matches(r: ProvisioningRecord, q: LogQuery): boolean {
  if (q.sinceMs !== undefined && Date.parse(r.time) < q.sinceMs) return false;
  if (q.result !== undefined && r.result !== q.result) return false;
  if (q.action !== undefined && r.action !== q.action && !r.action.startsWith(`${q.action}.`)) return false;
  if (q.user !== undefined && q.user !== '') {
    const needle = q.user.toLowerCase();
    // An externalId the record moved the object away from (a reassign, a handover) finds it too.
    const formerIds = (r.changes ?? [])
      .filter((c) => c.path === 'externalId' && typeof c.before === 'string')
      .map((c) => c.before as string);
    const hay = [r.object.externalId, r.object.name, r.object.id, ...formerIds, ...(r.members?.added ?? []), ...(r.members?.removed ?? [])];
    if (!hay.some((h) => h !== undefined && h.toLowerCase().includes(needle))) return false;
  }
  return true;
}

/** `2h`, `30m`, `7d`, `45s` before now, or an ISO 8601 date/instant; undefined when unparsable. */
export function parseSince(text: string, now: number = Date.now()): number | undefined {
  const rel = /^(\d+(?:\.\d+)?)\s*(s|m|h|d|w)$/i.exec(text.trim());
  if (rel) {
    const unit = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 }[rel[2]!.toLowerCase() as 's' | 'm' | 'h' | 'd' | 'w'];
    return now - Number(rel[1]) * unit;
  }
  const t = Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(text.trim()) ? `${text.trim()}T00:00:00Z` : text.trim());
  return Number.isNaN(t) ? undefined : t;
}

/** Compares two log ids (`<ms>-<seq>`) numerically. */
export function compareIds(a: string, b: string): number {
  const [am = 0, as = 0] = a.split('-').map(Number);
  const [bm = 0, bs = 0] = b.split('-').map(Number);
  return am !== bm ? am - bm : as - bs;
}
