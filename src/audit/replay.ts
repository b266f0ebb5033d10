/**
 * `audit replay --sink NAME`: re-deliver a sink's dead-lettered events to that sink. Events
 * it rejects again go back to the dead-letter store with their attempt count raised; if the
 * sink fails outright, the replay stops and the untouched batch stays dead-lettered.
 * Delivery is at-least-once (a replay killed mid-way re-sends its last batch next time).
 */
import type { Logger } from 'pino';
import { ConfigError } from '../errors.ts';
import { PARSE_DEAD_LETTER, type DeadLetter, type DeadLetterStore } from './dead-letter/store.ts';
import { eventFromDoc, type AuditEvent } from './event.ts';
import { ignoreAuditEvents, type AuditObserver } from './observer.ts';
import type { Sink } from './sinks/sink.ts';

export interface ReplayDeps {
  tenant: string;
  deadLetters: DeadLetterStore;
  /** The configured sinks; the one named in the call is used. */
  sinks: Sink[];
  logger?: Logger;
  /** Receives the delivered counts (metrics): `auditRecorder`. */
  observer?: AuditObserver;
  now?: () => number;
  signal?: AbortSignal;
  /** Open/close the sink around the replay (default true). */
  manageSinks?: boolean;
}

export interface ReplaySummary {
  sink: string;
  /** Dead letters taken from the store. */
  taken: number;
  delivered: number;
  /** Rejected again (back in the store, attempts + 1). */
  rejectedAgain: number;
  /** Entries without an event (should not happen for a sink): left in the store. */
  kept: number;
}

/** Dead letters written before events carried their JSON text hold the document as an object. */
function withJson(event: AuditEvent & { doc?: Record<string, unknown> }): AuditEvent {
  return typeof event.json === 'string' || !event.doc ? event : eventFromDoc(event.key, event.timestampMs, event.doc);
}

export async function replayDeadLetters(deps: ReplayDeps, sinkName: string, opts: { batchSize?: number } = {}): Promise<ReplaySummary> {
  if (sinkName === PARSE_DEAD_LETTER) {
    throw new ConfigError(
      `"${PARSE_DEAD_LETTER}" holds CSV rows that are not events: there is nothing to replay; read them with \`audit status --json\` and the dead-letter store (${deps.deadLetters.describe})`,
    );
  }
  const sink = deps.sinks.find((s) => s.name === sinkName);
  if (!sink) {
    throw new ConfigError(`no sink named "${sinkName}" in audit.sinks (configured: ${deps.sinks.map((s) => s.name).join(', ') || 'none'})`);
  }
  const now = deps.now ?? Date.now;
  const summary: ReplaySummary = { sink: sinkName, taken: 0, delivered: 0, rejectedAgain: 0, kept: 0 };
  const manage = deps.manageSinks ?? true;
  if (manage) await sink.open();
  try {
    const res = await deps.deadLetters.drain(sinkName, opts.batchSize ?? 500, async (batch) => {
      deps.signal?.throwIfAborted();
      const back: DeadLetter[] = [];
      const byKey = new Map<string, DeadLetter>();
      const events: AuditEvent[] = [];
      for (const entry of batch) {
        if (!entry.event) {
          back.push(entry);
          summary.kept++;
          continue;
        }
        const event = withJson(entry.event);
        byKey.set(event.key, entry);
        events.push(event);
      }
      if (events.length === 0) return back;
      const result = await sink.write(events, deps.signal);
      summary.delivered += result.delivered;
      (deps.observer ?? ignoreAuditEvents)({
        type: 'delivered',
        sink: sinkName,
        delivered: result.delivered,
        alreadyHeld: 0,
        deadLettered: 0,
      });
      for (const r of result.rejected) {
        const prev = byKey.get(r.event.key);
        back.push({
          ...(prev as DeadLetter),
          code: r.code,
          reason: r.reason,
          attempts: (prev?.attempts ?? 0) + 1,
          atMs: now(),
          event: r.event,
        });
        summary.rejectedAgain++;
      }
      return back;
    });
    summary.taken = res.taken;
    deps.logger?.info({ ...summary }, 'audit dead-letter replay finished');
    return summary;
  } finally {
    if (manage) await sink.close();
  }
}
