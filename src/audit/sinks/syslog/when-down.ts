/**
 * What a syslog receiver that stays down costs the export. With `whenDown: fail` a spent retry
 * budget throws (the run stops, the cursor stays). With `whenDown: dead-letter` (default) the
 * request's unconfirmed messages become rejections with code `syslog_unreachable`: the engine
 * writes them to the dead-letter store, the export and the other sinks go on, and
 * `audit replay --sink NAME` sends them once the receiver is back. Once a receiver was found
 * down, the rest of that write is dead-lettered without another attempt, and each later
 * write gets a single attempt until one is confirmed: a dead receiver does not cost a full
 * retry budget per batch.
 */
import type { Logger } from 'pino';
import { DELIVERED, UnconfirmedError, type Delivery, type MessageOutcome } from './delivery.ts';

export const SYSLOG_UNREACHABLE = 'syslog_unreachable';

export type WhenDownMode = 'dead-letter' | 'fail';

/** One `write()`: whether a request of it already found the receiver down. */
export interface WriteScope {
  failed: boolean;
}

export class WhenDown {
  private readonly mode: WhenDownMode;
  private readonly target: string;
  private readonly logger: Logger | undefined;
  /** Why the receiver counts as down (the last failure), or undefined while it answers. */
  private down: string | undefined;

  constructor(o: { mode: WhenDownMode; target: string; logger?: Logger | undefined }) {
    this.mode = o.mode;
    this.target = o.target;
    this.logger = o.logger;
  }

  /** The sink was (re)opened: the receiver gets a full budget again. */
  reset(): void {
    this.down = undefined;
  }

  /** Delivers one request; under `dead-letter`, what the receiver did not confirm comes back rejected. */
  async deliver(
    delivery: Delivery,
    messages: readonly Buffer[],
    signal: AbortSignal | undefined,
    scope: WriteScope,
  ): Promise<MessageOutcome[]> {
    if (scope.failed && this.down !== undefined) {
      const reason = `not sent: receiver ${this.target} down (${this.down})`;
      return messages.map(() => ({ delivered: false, code: SYSLOG_UNREACHABLE, reason }));
    }
    const wasDown = this.down !== undefined;
    let outcomes: ReadonlyArray<MessageOutcome | undefined>;
    try {
      outcomes = await delivery.deliver(messages, { signal, maxAttempts: wasDown ? 1 : undefined });
    } catch (e) {
      if (!(e instanceof UnconfirmedError) || this.mode !== 'dead-letter') throw e;
      outcomes = e.outcomes;
      this.down = e.message;
      scope.failed = true;
      if (!wasDown) {
        this.logger?.warn(
          { target: this.target, reason: e.message },
          'syslog receiver down: unconfirmed events are dead-lettered (syslog_unreachable) for audit replay; one attempt per write until it answers',
        );
      }
      const reason = `receiver ${this.target} did not confirm: ${e.message}`;
      return outcomes.map((o) => o ?? { delivered: false, code: SYSLOG_UNREACHABLE, reason });
    }
    if (wasDown) {
      this.down = undefined;
      this.logger?.info({ target: this.target }, 'syslog receiver answers again');
    }
    return outcomes.map((o) => o ?? DELIVERED);
  }
}
