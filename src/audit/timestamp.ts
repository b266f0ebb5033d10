/**
 * Event-time parsing. The export's time format is undocumented, so we accept ISO 8601
 * (`T` or space separator, optional fraction, optional `Z`/offset), epoch seconds or
 * milliseconds, and anything `Date.parse` reads that names its zone. A value without an
 * offset is read in the configured zone: `UTC` (default), a fixed `+hh:mm`, or an IANA name.
 */

/** Returns epoch ms, or undefined when the value is not a timestamp we can place on the time line. */
export type TimestampParser = (value: string) => number | undefined;

const ISO_LIKE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?\s*(Z|UTC|GMT|[+-]\d{2}(?::?\d{2})?)?$/i;
const FIXED_OFFSET = /^([+-])(\d{2}):?(\d{2})$/;

/** Offset string (`+05:30`, `-0800`, `+02`, `Z`) → minutes east of UTC. */
function offsetMinutes(text: string): number {
  const t = text.toUpperCase();
  if (t === 'Z' || t === 'UTC' || t === 'GMT') return 0;
  const sign = t.startsWith('-') ? -1 : 1;
  const digits = t.slice(1).replace(':', '');
  const h = Number(digits.slice(0, 2));
  const m = digits.length > 2 ? Number(digits.slice(2, 4)) : 0;
  return sign * (h * 60 + m);
}

/** Milliseconds to subtract from a wall-clock-as-UTC value to get the instant, per zone. */
type ZoneResolver = (wallAsUtcMs: number) => number;

export function isValidTimeZone(zone: string): boolean {
  if (zone.toUpperCase() === 'UTC' || FIXED_OFFSET.test(zone)) return true;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

function ianaResolver(zone: string): ZoneResolver {
  const fmt = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  });
  /** Offset (ms) of `zone` at instant `utcMs`. */
  const offsetAt = (utcMs: number): number => {
    const p: Record<string, number> = {};
    for (const part of fmt.formatToParts(new Date(utcMs))) if (part.type !== 'literal') p[part.type] = Number(part.value);
    const wall = Date.UTC(p['year'] ?? 1970, (p['month'] ?? 1) - 1, p['day'] ?? 1, p['hour'] ?? 0, p['minute'] ?? 0, p['second'] ?? 0);
    return wall - (utcMs - (((utcMs % 1000) + 1000) % 1000));
  };
  // Offsets change at most a few times a year, on hour boundaries: cache per wall-clock hour.
  const cache = new Map<number, number>();
  return (wallMs) => {
    const hour = Math.floor(wallMs / 3_600_000);
    let off = cache.get(hour);
    if (off === undefined) {
      // Two passes settle DST edges: guess with the offset at the wall time, then re-check.
      const first = offsetAt(wallMs);
      off = offsetAt(wallMs - first);
      if (cache.size > 10_000) cache.clear();
      cache.set(hour, off);
    }
    return off;
  };
}

function zoneResolver(zone: string): ZoneResolver {
  if (zone.toUpperCase() === 'UTC') return () => 0;
  const fixed = FIXED_OFFSET.exec(zone);
  if (fixed) {
    const ms = offsetMinutes(zone) * 60_000;
    return () => ms;
  }
  return ianaResolver(zone);
}

function fractionMs(frac: string | undefined): number {
  if (!frac) return 0;
  // Keep millisecond precision; finer digits are truncated (the cursor is in ms).
  return Number((frac + '00').slice(0, 3));
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
/** 400 Gregorian years, in ms: the calendar repeats after it. */
const GREGORIAN_CYCLE_MS = 146_097 * 86_400_000;

function daysInMonth(y: number, mo: number): number {
  if (mo !== 2) return DAYS_IN_MONTH[mo - 1] as number;
  return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0 ? 29 : 28;
}

/**
 * Wall-clock fields as if in UTC, or undefined when one is out of range (Date.UTC would
 * silently roll month 13 into the next year and 31 February into March: out-of-range
 * fields are not times).
 */
function wallAsUtc(y: number, mo: number, d: number, h: number, mi: number, se: number, ms: number): number | undefined {
  if (mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo) || h < 0 || h > 23 || mi < 0 || mi > 59 || se < 0 || se > 59) return undefined;
  // Date.UTC reads years 0–99 as 1900–1999: shift by a whole calendar cycle and back.
  return y >= 0 && y < 100 ? Date.UTC(y + 400, mo - 1, d, h, mi, se, ms) - GREGORIAN_CYCLE_MS : Date.UTC(y, mo - 1, d, h, mi, se, ms);
}

/** Two ASCII digits at `i`, or -1. */
function two(s: string, i: number): number {
  const a = s.charCodeAt(i) - 48;
  const b = s.charCodeAt(i + 1) - 48;
  return a >= 0 && a <= 9 && b >= 0 && b <= 9 ? a * 10 + b : -1;
}

/**
 * `YYYY-MM-DDTHH:MM:SS.sssZ` exactly (what the platform and `toISOString` write): read by
 * position, without the general pattern. Anything else, or a field out of range, is left to
 * the general path. Both check ranges in wallAsUtc().
 */
function canonicalUtc(v: string): number | undefined {
  if (v.length !== 24 || v.charCodeAt(23) !== 90 /* Z */ || v.charCodeAt(10) !== 84 /* T */) return undefined;
  if (v.charCodeAt(4) !== 45 || v.charCodeAt(7) !== 45 || v.charCodeAt(13) !== 58 || v.charCodeAt(16) !== 58 || v.charCodeAt(19) !== 46)
    return undefined;
  const hi = two(v, 0);
  const lo = two(v, 2);
  const mo = two(v, 5);
  const d = two(v, 8);
  const h = two(v, 11);
  const mi = two(v, 14);
  const se = two(v, 17);
  const ms1 = two(v, 20);
  const ms2 = v.charCodeAt(22) - 48;
  if (hi < 0 || lo < 0 || ms1 < 0 || ms2 < 0 || ms2 > 9) return undefined;
  return wallAsUtc(hi * 100 + lo, mo, d, h, mi, se, ms1 * 10 + ms2);
}

export function createTimestampParser(zone = 'UTC'): TimestampParser {
  const resolve = zoneResolver(zone);
  return (raw) => {
    const fast = canonicalUtc(raw);
    if (fast !== undefined) return fast;
    const value = raw.trim();
    if (value === '') return undefined;
    const m = ISO_LIKE.exec(value);
    if (m) {
      const wall = wallAsUtc(
        Number(m[1]),
        Number(m[2]),
        Number(m[3]),
        Number(m[4] ?? 0),
        Number(m[5] ?? 0),
        Number(m[6] ?? 0),
        fractionMs(m[7]),
      );
      if (wall === undefined) return undefined;
      return m[8] !== undefined ? wall - offsetMinutes(m[8]) * 60_000 : wall - resolve(wall);
    }
    if (/^\d{9,10}(\.\d+)?$/.test(value)) return Math.round(Number(value) * 1000);
    if (/^\d{12,13}$/.test(value)) return Number(value);
    // Other textual forms (RFC 2822 …) only when they carry their own zone; a zone-less
    // string would be read in the host's local time, which is never what we want.
    if (/(Z|GMT|UTC|[+-]\d{2}:?\d{2})$/i.test(value)) {
      const ms = Date.parse(value);
      return Number.isNaN(ms) ? undefined : ms;
    }
    return undefined;
  };
}
