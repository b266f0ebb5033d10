/**
 * Active Directory range retrieval (MS-ADTS 3.1.1.3.1.3.3). A group with more `member`
 * values than the server's MaxValRange (1500 by default) returns `member;range=0-1499`
 * instead of `member`; the rest is read with `member;range=1500-*` requests on the group
 * entry until the server answers a range ending in `*`. A gap or a missing ranged attribute
 * is an error: a silently truncated member list would remove people from groups.
 */
import { SourceError } from '../../errors.ts';

export interface RangeSlice {
  /** The attribute name as the server spelled it, e.g. `member;range=0-1499`. */
  key: string;
  start: number;
  /** Last index, or null for `*` (the final slice). */
  end: number | null;
  values: string[];
}

const RANGE_RE = /^([^;]+)((?:;[^;]+)*);range=(\d+)-(\d+|\*)((?:;[^;]+)*)$/i;

/** Parse `member;range=0-1499` → { base: 'member', start: 0, end: 1499 }; undefined when not ranged. */
export function parseRangedName(name: string): { base: string; start: number; end: number | null } | undefined {
  const m = RANGE_RE.exec(name);
  if (!m) return undefined;
  const end = m[4] === '*' ? null : Number(m[4]);
  return { base: (m[1] as string) + (m[2] ?? '') + (m[5] ?? ''), start: Number(m[3]), end };
}

/** The ranged slice of `attribute` present in an entry (keys compared case-insensitively). */
export function findRangeSlice(entry: Readonly<Record<string, unknown>>, attribute: string): RangeSlice | undefined {
  const want = attribute.toLowerCase();
  for (const [key, raw] of Object.entries(entry)) {
    const parsed = parseRangedName(key);
    if (!parsed || parsed.base.toLowerCase() !== want) continue;
    const values = raw === undefined ? [] : (Array.isArray(raw) ? raw : [raw]).map(String);
    return { key, start: parsed.start, end: parsed.end, values };
  }
  return undefined;
}

/** Reads the entry `dn` asking for exactly one attribute description, e.g. `member;range=1500-*`. */
export type RangeFetcher = (dn: string, attributeDescription: string) => Promise<Readonly<Record<string, unknown>> | undefined>;

export interface RangeResult {
  values: string[];
  /** Follow-up requests made after the first slice. */
  requests: number;
}

/**
 * Complete a ranged attribute starting from the first slice the search returned.
 * `maxRequests` bounds the loop so a misbehaving server cannot keep us reading forever.
 */
export async function collectRange(
  dn: string,
  attribute: string,
  first: RangeSlice,
  fetch: RangeFetcher,
  maxRequests = 10_000,
): Promise<RangeResult> {
  const where = `range retrieval of ${attribute} on ${dn}`;
  if (first.start !== 0) throw new SourceError(`${where}: first slice starts at ${first.start}, expected 0`);
  const values = [...first.values];
  let end = first.end;
  let requests = 0;
  while (end !== null) {
    const next = end + 1;
    if (++requests > maxRequests) throw new SourceError(`${where}: gave up after ${maxRequests} requests`);
    const entry = await fetch(dn, `${attribute};range=${next}-*`);
    if (!entry) throw new SourceError(`${where}: the entry disappeared while reading range ${next}-*`);
    const slice = findRangeSlice(entry, attribute);
    if (!slice) throw new SourceError(`${where}: the server returned no ${attribute};range=… attribute for range ${next}-*`);
    if (slice.start !== next) throw new SourceError(`${where}: asked for range ${next}-*, got ${slice.key}`);
    if (slice.end !== null && slice.end < slice.start) throw new SourceError(`${where}: invalid range ${slice.key}`);
    values.push(...slice.values);
    end = slice.end;
  }
  return { values, requests };
}
