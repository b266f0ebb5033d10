/**
 * RELP: every message is a `syslog` command the receiver answers; a message counts as
 * delivered only on its `200` answer. The session stays open across requests. When it
 * breaks, the messages still unanswered are sent again on a new session (those already
 * answered are never resent), so a restart loses nothing and duplicates only what the
 * receiver took but could not answer before it went away. Any other answer rejects that
 * message (`relp_<status>`, dead-lettered). When the budget is spent, the answered messages
 * keep their outcome and only the unanswered ones are reported unconfirmed.
 */
import type { RetryLoopOptions } from '../retry-loop.ts';
import { runWithRetry } from '../retry-loop.ts';
import { DELIVERED, confirmOrReport, type DeliverOptions, type Delivery, type MessageOutcome } from './delivery.ts';
import type { RelpSession } from './relp/session.ts';
import { failure } from './socket.ts';

export interface RelpDeliveryOptions {
  retry: RetryLoopOptions;
  target: string;
  /** Opens a session (the sink maps a refusal or a TLS verification error to a fatal error). */
  open: () => Promise<RelpSession>;
}

export class RelpDelivery implements Delivery {
  private readonly o: RelpDeliveryOptions;
  private session: RelpSession | undefined;

  constructor(o: RelpDeliveryOptions) {
    this.o = o;
  }

  async deliver(messages: readonly Buffer[], opts: DeliverOptions = {}): Promise<MessageOutcome[]> {
    const { signal, maxAttempts } = opts;
    const outcomes: Array<MessageOutcome | undefined> = new Array(messages.length);
    const sent = new Array<boolean>(messages.length).fill(false);
    const retry = maxAttempts === undefined ? this.o.retry : { ...this.o.retry, policy: { ...this.o.retry.policy, maxAttempts } };
    const answered = runWithRetry(
      retry,
      `send ${messages.length} messages to ${this.o.target}`,
      async () => {
        const todo: number[] = [];
        for (let i = 0; i < messages.length; i++) if (outcomes[i] === undefined) todo.push(i);
        this.o.retry.instrument.resent(todo.filter((i) => sent[i]).length, 'RELP session broke before the receiver answered');
        const s = await this.sessionOpen();
        const answers: Array<Promise<void>> = [];
        for (const i of todo) {
          await s.room();
          if (!s.usable) break;
          sent[i] = true;
          answers.push(
            s.send(messages[i] as Buffer).then((a) => {
              outcomes[i] = a.ok
                ? DELIVERED
                : { delivered: false, code: `relp_${a.status}`, reason: `the receiver answered ${a.status} ${a.text}`.trim() };
            }),
          );
        }
        const settled = await Promise.allSettled(answers);
        const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
        if (failed) throw failed.reason;
        if (outcomes.some((o) => o === undefined)) throw failure('ECONNRESET', 'RELP session broke');
        return { done: undefined, result: 'ok', events: todo.length };
      },
      signal,
    );
    // Answers that arrived before the budget ran out stand; only the unanswered are unconfirmed.
    await confirmOrReport(answered, () => [...outcomes], signal);
    return outcomes.map((o) => o ?? DELIVERED);
  }

  async close(): Promise<void> {
    const s = this.session;
    this.session = undefined;
    await s?.close();
  }

  private async sessionOpen(): Promise<RelpSession> {
    if (this.session?.usable) return this.session;
    this.session?.destroy();
    this.session = undefined;
    this.session = await this.o.open();
    return this.session;
  }
}
