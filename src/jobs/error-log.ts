/**
 * Errors of the daemon's Redis connections and BullMQ objects (queues, queue events, flow
 * producer, workers) go through the logger, one JSON line each, never as raw stack traces on
 * stderr (an EventEmitter without an `error` listener prints them itself). During an outage
 * every connection reports the same error on every reconnect attempt: the same message is
 * logged once per window, with how often it was repeated and by which components.
 */
import type { Logger } from '../observability/logger.ts';

export const ERROR_LOG_WINDOW_MS = 30_000;

export type ErrorReporter = (component: string) => (err: unknown) => void;

export function errorReporter(logger: Logger, windowMs = ERROR_LOG_WINDOW_MS, now: () => number = Date.now): ErrorReporter {
  const seen = new Map<string, { loggedAt: number; repeated: number; components: Set<string> }>();
  return (component) => (err) => {
    const message = err instanceof Error ? err.message : String(err);
    const code = (err as { code?: unknown } | undefined)?.code;
    const key = `${typeof code === 'string' ? code : ''}|${message}`;
    const t = now();
    const s = seen.get(key);
    if (s && t - s.loggedAt < windowMs) {
      s.repeated++;
      s.components.add(component);
      return;
    }
    if (seen.size > 100) seen.clear();
    seen.set(key, { loggedAt: t, repeated: 0, components: new Set() });
    const again = s && s.repeated > 0 ? { repeated: s.repeated, alsoFrom: [...s.components].sort() } : {};
    logger.warn({ component, err: message, ...(typeof code === 'string' ? { code } : {}), ...again }, 'redis/queue error');
  };
}
