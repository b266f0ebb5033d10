/**
 * Every Redis key the audit export writes, built here and nowhere else. The tenant is a
 * hash tag (`{tenant}`) so all of a tenant's keys share one cluster slot and a commit can
 * touch them in one script.
 */

export interface AuditRedisKeys {
  /** Hash: cursorMs, columns (JSON), backfill (JSON), updatedAtMs. */
  state: string;
  /** Sorted set: member = event key, score = event timestamp (ms). */
  dedupe: string;
  /** Hash: field = window start (ms), value = `<endMs> <count> <hash>` (window digests); `_windowMs`, `_sinceMs`. */
  digests: string;
  /** String: the run lease token (with a TTL). */
  lock: string;
  /** Set of sink names that have (or had) dead letters. */
  deadLetterSinks: string;
  /** List of JSON dead-letter entries for one sink. */
  deadLetters(sink: string): string;
  /** List of entries taken by a replay in progress (put back if the replay dies). */
  deadLettersReplaying(sink: string): string;
}

export function auditRedisKeys(keyPrefix: string, tenant: string): AuditRedisKeys {
  const base = `${keyPrefix}:{${tenant}}:audit`;
  return {
    state: `${base}:state`,
    dedupe: `${base}:dedupe`,
    digests: `${base}:digests`,
    lock: `${base}:lock`,
    deadLetterSinks: `${base}:dlq-sinks`,
    deadLetters: (sink) => `${base}:dlq:${sink}`,
    deadLettersReplaying: (sink) => `${base}:dlq:${sink}:replaying`,
  };
}
