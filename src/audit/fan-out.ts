/**
 * Hands one batch to every sink at once and waits for all of them. Each sink retries on its
 * own; if one still fails, the whole batch fails (the cursor will not move past it). A sink's
 * rejections are dead-lettered under its name before the batch counts as done. Events a sink
 * already holds (reported by `recentKeys` after a crash) are not written to it again.
 */
import { randomUUID } from 'node:crypto';
import type { AuditEvent } from './event.ts';
import type { Sink } from './sinks/sink.ts';
import type { DeadLetter, DeadLetterStore } from './dead-letter/store.ts';
import { ErrorCodes, SyncError, isSyncError } from '../errors.ts';
import { withSpan } from '../observability/tracing/spans.ts';

/** A sink failed after its own retries: the run stops (retrying the window would not help). */
export class SinkFailedError extends SyncError {
  readonly sink: string;
  constructor(sink: string, cause: unknown) {
    const base = isSyncError(cause) ? cause : undefined;
    const message = base?.message ?? (cause instanceof Error ? cause.message : String(cause));
    super(
      base?.code ?? ErrorCodes.TRANSIENT,
      base?.kind ?? 'transient',
      message.startsWith(`sink ${sink}`) ? message : `sink ${sink}: ${message}`,
      { cause },
    );
    this.name = 'SinkFailedError';
    this.sink = sink;
  }
}

export interface SinkLane {
  sink: Sink;
  /** Keys this sink held at start (crash between its ack and our commit). */
  held: Set<string> | undefined;
}

export interface LaneResult {
  delivered: number;
  /** Events not written because the sink already held them. */
  alreadyHeld: number;
  deadLettered: number;
}

export async function fanOut(
  events: AuditEvent[],
  lanes: readonly SinkLane[],
  deadLetters: DeadLetterStore,
  signal: AbortSignal | undefined,
  nowMs: number,
): Promise<Map<string, LaneResult>> {
  const settled = await Promise.allSettled(
    lanes.map(async (lane) => {
      const toWrite = lane.held && lane.held.size > 0 ? events.filter((e) => !lane.held?.has(e.key)) : events;
      const alreadyHeld = events.length - toWrite.length;
      if (toWrite.length === 0) return { lane, delivered: 0, alreadyHeld, rejected: [] };
      const attrs = { 'scimsync.sink': lane.sink.name, 'scimsync.sink_type': lane.sink.type, 'scimsync.events': toWrite.length };
      const res = await withSpan('audit sink batch', attrs, async (span) => {
        try {
          const written = await lane.sink.write(toWrite, signal);
          span.set({ 'scimsync.delivered': written.delivered, 'scimsync.rejected': written.rejected.length });
          return written;
        } catch (e) {
          if (signal?.aborted) throw e;
          throw new SinkFailedError(lane.sink.name, e);
        }
      });
      return { lane, delivered: res.delivered, alreadyHeld, rejected: res.rejected };
    }),
  );
  const failure = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failure) throw failure.reason;
  const out = new Map<string, LaneResult>();
  const letters: DeadLetter[] = [];
  for (const s of settled) {
    if (s.status !== 'fulfilled') continue;
    const { lane, delivered, alreadyHeld, rejected } = s.value;
    for (const r of rejected) {
      letters.push({ id: randomUUID(), sink: lane.sink.name, atMs: nowMs, code: r.code, reason: r.reason, attempts: 0, event: r.event });
    }
    out.set(lane.sink.name, { delivered, alreadyHeld, deadLettered: rejected.length });
  }
  if (letters.length > 0) await deadLetters.add(letters);
  return out;
}
