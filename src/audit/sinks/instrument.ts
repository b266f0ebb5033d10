/**
 * The one place a sink reports what happened: metrics, the observer and the log line move
 * together, so a sink never updates one and forgets the others. Messages passed here are
 * already free of secrets (sinks build them from codes and statuses only).
 */
import type { Logger } from 'pino';
import type { SinkContext } from './context.ts';
import type { RejectedEvent, SinkObserver } from './sink.ts';
import {
  sinkBatchEvents,
  sinkErrors,
  sinkEvents,
  sinkRequestDuration,
  sinkRequests,
  sinkResentEvents,
  sinkRetries,
  sinkTruncatedEvents,
  type RequestResult,
} from './metrics.ts';

export class SinkInstrument {
  readonly sink: string;
  readonly type: string;
  private readonly logger: Logger | undefined;
  private readonly observer: SinkObserver | undefined;

  constructor(sink: string, type: string, ctx: Pick<SinkContext, 'logger' | 'observer'>) {
    this.sink = sink;
    this.type = type;
    this.logger = ctx.logger?.child({ sink, sinkType: type });
    this.observer = ctx.observer;
  }

  /** One attempt finished (successfully or not). */
  request(result: RequestResult, seconds: number, events: number): void {
    const labels = { sink: this.sink, type: this.type };
    sinkRequests.inc({ ...labels, result });
    sinkRequestDuration.observe(labels, seconds);
    if (result === 'ok' || result === 'partial' || result === 'rejected') sinkBatchEvents.observe(labels, events);
  }

  retry(attempt: number, delayMs: number, reason: string): void {
    sinkRetries.inc({ sink: this.sink, type: this.type });
    this.observer?.onRetry?.({ sink: this.sink, attempt, delayMs, reason });
    this.logger?.warn({ attempt, delayMs, reason }, 'sink request failed, retrying');
  }

  error(code: string, message: string): void {
    sinkErrors.inc({ sink: this.sink, type: this.type, code });
    this.observer?.onError?.({ sink: this.sink, code, message });
    this.logger?.error({ code, err: message }, 'sink error');
  }

  /** Events sent again because their connection broke before the receiver confirmed them. */
  resent(n: number, reason: string): void {
    if (n <= 0) return;
    sinkResentEvents.inc({ sink: this.sink, type: this.type }, n);
    this.logger?.warn({ resent: n, reason }, 'sink resends events the receiver had not confirmed (possible duplicates)');
  }

  /** Events shortened to fit the destination's size limit; their keys help find them. */
  truncated(keys: string[], maxBytes: number): void {
    if (keys.length === 0) return;
    sinkTruncatedEvents.inc({ sink: this.sink, type: this.type }, keys.length);
    this.logger?.warn({ truncated: keys.length, maxBytes, keys: keys.slice(0, 5) }, 'sink truncated oversize events');
  }

  delivered(n: number): void {
    if (n > 0) sinkEvents.inc({ sink: this.sink, type: this.type, outcome: 'delivered' }, n);
  }

  rejected(list: RejectedEvent[]): void {
    if (list.length === 0) return;
    sinkEvents.inc({ sink: this.sink, type: this.type, outcome: 'rejected' }, list.length);
    const byCode = new Map<string, number>();
    for (const r of list) byCode.set(r.code, (byCode.get(r.code) ?? 0) + 1);
    for (const [code, n] of byCode) sinkErrors.inc({ sink: this.sink, type: this.type, code }, n);
    // Event keys are ids, not personal data; the first few help an operator find the dead letters.
    this.logger?.warn(
      { rejected: list.length, codes: Object.fromEntries(byCode), keys: list.slice(0, 5).map((r) => r.event.key) },
      'sink rejected events',
    );
  }
}
