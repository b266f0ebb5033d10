/**
 * The Okta change cursor: the newest `lastUpdated` / `lastMembershipUpdated` reported (Okta's
 * clock) and the versions reported within OKTA_OVERLAP_MS behind it. Okta's search index
 * trails writes by a few seconds, so each change read re-reads that far back and skips the
 * versions already reported (a user: id and lastUpdated; a group: id and both timestamps).
 * A plain ISO 8601 instant is accepted as a cursor with nothing seen.
 */
export const OKTA_OVERLAP_MS = 10_000;

export interface OktaCursor {
  v: 1;
  /** ISO 8601. */
  since: string;
  seen: string[];
}

export function encodeOktaCursor(c: Omit<OktaCursor, 'v'>): string {
  return JSON.stringify({ v: 1, ...c });
}

export function decodeOktaCursor(raw: string): OktaCursor | undefined {
  if (!raw.startsWith('{')) return Number.isNaN(Date.parse(raw)) ? undefined : { v: 1, since: new Date(raw).toISOString(), seen: [] };
  try {
    const o = JSON.parse(raw) as Partial<OktaCursor> | null;
    if (o?.v === 1 && typeof o.since === 'string' && !Number.isNaN(Date.parse(o.since)) && Array.isArray(o.seen)) return o as OktaCursor;
  } catch {
    // not a cursor: a full read
  }
  return undefined;
}

/** After reporting `versions`: the newest time, and what was reported within the overlap behind it. */
export function nextOktaCursor(prev: OktaCursor, versions: ReadonlyArray<{ key: string; at: number }>): string {
  let newest = Date.parse(prev.since);
  for (const v of versions) if (v.at > newest) newest = v.at;
  const floor = newest - OKTA_OVERLAP_MS;
  const atOf = (key: string): number => {
    // user `id@time`, group `id@lastUpdated@lastMembershipUpdated`: the latest time in the key
    const times = key
      .split('@')
      .slice(1)
      .map((x) => Date.parse(x) || 0);
    return Math.max(0, ...times);
  };
  const keep = new Set(prev.seen.filter((k) => atOf(k) > floor));
  for (const v of versions) if (v.at > floor) keep.add(v.key);
  return encodeOktaCursor({ since: new Date(newest).toISOString(), seen: [...keep] });
}
