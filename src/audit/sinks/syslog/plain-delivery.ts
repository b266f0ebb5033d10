/**
 * Plain TCP/TLS syslog: a request's frames are written on a fresh connection, which is then
 * committed (see connection.ts: our end of stream, answered by the receiver's). When anything
 * breaks before the commit, every frame written on that connection is sent again on the next
 * one: at-least-once, with the resends counted. Nothing of a request counts as confirmed
 * until its commit, so a spent budget leaves all of its messages unconfirmed.
 */
import type { RetryLoopOptions } from '../retry-loop.ts';
import { runWithRetry } from '../retry-loop.ts';
import type { SyslogConnection } from './connection.ts';
import { DELIVERED, confirmOrReport, type DeliverOptions, type Delivery, type MessageOutcome } from './delivery.ts';
import { frame, type SyslogFraming } from './encoder.ts';

export interface PlainDeliveryOptions {
  retry: RetryLoopOptions;
  framing: SyslogFraming;
  timeoutMs: number;
  /** What the log and errors call the destination (`host:port`). */
  target: string;
  connect: () => Promise<SyslogConnection>;
}

/** Frames per socket write: enough to amortise the write, small enough to bound the copy. */
const WRITE_BYTES = 256 * 1024;

export class PlainDelivery implements Delivery {
  private readonly o: PlainDeliveryOptions;

  constructor(o: PlainDeliveryOptions) {
    this.o = o;
  }

  async deliver(messages: readonly Buffer[], opts: DeliverOptions = {}): Promise<MessageOutcome[]> {
    const { signal, maxAttempts } = opts;
    const writes = groupFrames(messages.map((m) => frame(m, this.o.framing)));
    const n = messages.length;
    let written = 0;
    const retry = maxAttempts === undefined ? this.o.retry : { ...this.o.retry, policy: { ...this.o.retry.policy, maxAttempts } };
    const confirmed = runWithRetry(
      retry,
      `write ${n} messages to ${this.o.target}`,
      async () => {
        this.o.retry.instrument.resent(written, 'connection broke before the receiver confirmed');
        written = 0;
        const conn = await this.o.connect();
        try {
          for (const w of writes) {
            written += w.count;
            await conn.write(w.bytes, this.o.timeoutMs);
          }
          await conn.commit(this.o.timeoutMs);
        } catch (e) {
          conn.destroy();
          throw e;
        }
        return { done: undefined, result: 'ok', events: n };
      },
      signal,
    );
    await confirmOrReport(confirmed, () => messages.map(() => undefined), signal);
    return messages.map(() => DELIVERED);
  }

  async close(): Promise<void> {}
}

function groupFrames(frames: Buffer[]): Array<{ bytes: Buffer; count: number }> {
  const out: Array<{ bytes: Buffer; count: number }> = [];
  let cur: Buffer[] = [];
  let size = 0;
  for (const f of frames) {
    if (cur.length > 0 && size + f.length > WRITE_BYTES) {
      out.push({ bytes: Buffer.concat(cur, size), count: cur.length });
      cur = [];
      size = 0;
    }
    cur.push(f);
    size += f.length;
  }
  if (cur.length > 0) out.push({ bytes: Buffer.concat(cur, size), count: cur.length });
  return out;
}
