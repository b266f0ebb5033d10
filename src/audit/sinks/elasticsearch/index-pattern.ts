/**
 * Index names with a date from the event's own timestamp (UTC), Logstash style:
 * `platform-audit-%{+yyyy.MM.dd}`. Supported tokens inside `%{+…}`: yyyy, yy, MM, dd, HH.
 * Using the event time (not the wall clock) keeps a replayed event in the same index, so
 * its `_id` still deduplicates.
 */

const PLACEHOLDER = /%\{\+([^}]*)\}/g;
const TOKENS = /yyyy|yy|MM|dd|HH/g;
const INVALID_CHARS = /[\\/*?"<>| ,#:A-Z]/;

/** A message when the pattern cannot produce valid index names, else undefined. */
export function checkIndexPattern(pattern: string): string | undefined {
  for (const m of pattern.matchAll(PLACEHOLDER)) {
    const rest = (m[1] ?? '').replace(TOKENS, '');
    if (/[a-zA-Z]/.test(rest)) return `unsupported date token in "${m[0]}": use yyyy, yy, MM, dd, HH`;
  }
  const literal = pattern.replace(PLACEHOLDER, '');
  if (INVALID_CHARS.test(literal)) return 'index names are lower-case and cannot contain \\ / * ? " < > | space , # :';
  if (/^[-_+]/.test(pattern)) return 'an index name cannot start with -, _ or +';
  return undefined;
}

export function formatIndex(pattern: string, timestampMs: number): string {
  if (!pattern.includes('%{+')) return pattern;
  if (!Number.isFinite(timestampMs)) throw new Error('event has no valid timestamp for the index date');
  const d = new Date(timestampMs);
  const pad = (n: number): string => String(n).padStart(2, '0');
  const values: Record<string, string> = {
    yyyy: String(d.getUTCFullYear()).padStart(4, '0'),
    yy: pad(d.getUTCFullYear() % 100),
    MM: pad(d.getUTCMonth() + 1),
    dd: pad(d.getUTCDate()),
    HH: pad(d.getUTCHours()),
  };
  return pattern.replace(PLACEHOLDER, (_, fmt: string) => fmt.replace(TOKENS, (t) => values[t] ?? t));
}
