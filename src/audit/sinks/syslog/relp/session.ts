/**
 * One RELP session (client side): `open` with our offers, then `syslog` commands, each
 * answered by an `rsp` carrying the same transaction number, at most `window` unanswered at
 * a time; `close` ends it. A receiver going away (`serverclose`, a reset, no answer within
 * the timeout, a protocol error) breaks the session: every unanswered message is failed and
 * the sink sends those again on a new session. Only an answer counts as delivery.
 */
import type { Socket } from 'node:net';
import type { TransportFailure } from '../../retry-loop.ts';
import { codeOf, failure, openSocket, type SocketOptions } from '../socket.ts';
import { MAX_TXNR, RelpParser, encodeRelpFrame, type RelpFrame } from './frame.ts';

export type RelpAnswer = { ok: true } | { ok: false; status: string; text: string };

export interface RelpSessionOptions extends SocketOptions {
  /** Unanswered messages at most. */
  window: number;
  /** No answer for this long while messages wait: the session is broken. */
  timeoutMs: number;
}

/** The receiver refused the session itself (not a transport failure: retrying will not help). */
export class RelpRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RelpRefusedError';
  }
}

const OFFERS = Buffer.from('relp_version=0\nrelp_software=scim-audit-sync\ncommands=syslog', 'ascii');
/** Answers are status lines and offers: small. */
const MAX_ANSWER_BYTES = 64 * 1024;

interface Waiting {
  resolve: (a: RelpAnswer) => void;
  reject: (e: Error) => void;
}

export class RelpSession {
  private readonly socket: Socket;
  private readonly parser = new RelpParser(MAX_ANSWER_BYTES);
  private readonly waiting = new Map<number, Waiting>();
  private readonly roomWaiters: Array<() => void> = [];
  private readonly window: number;
  private readonly timeoutMs: number;
  private nextTxnr = 1;
  private broken: TransportFailure | undefined;
  private timer: NodeJS.Timeout | undefined;

  private constructor(socket: Socket, o: RelpSessionOptions) {
    this.socket = socket;
    this.window = o.window;
    this.timeoutMs = o.timeoutMs;
    socket.on('data', (chunk: Buffer) => {
      let frames: RelpFrame[];
      try {
        frames = this.parser.push(chunk);
      } catch (e) {
        this.break(failure('E_RELP_PROTOCOL', (e as Error).message, e));
        return;
      }
      for (const f of frames) this.onFrame(f);
    });
    socket.on('error', (e) => this.break(failure(codeOf(e), `RELP session failed (${codeOf(e)})`, e)));
    socket.on('end', () => this.break(failure('ECONNRESET', 'the receiver closed the RELP session')));
    socket.on('close', () => this.break(failure('ECONNRESET', 'RELP session closed')));
  }

  static async open(o: RelpSessionOptions): Promise<RelpSession> {
    const session = new RelpSession(await openSocket(o), o);
    const answer = await session.request('open', OFFERS);
    if (!answer.ok) {
      session.destroy();
      throw new RelpRefusedError(`the receiver refused the RELP session: ${answer.status} ${answer.text}`);
    }
    return session;
  }

  get usable(): boolean {
    return this.broken === undefined;
  }

  /** Resolves when one more message may be sent (or the session broke: send() then fails). */
  room(): Promise<void> {
    if (this.broken || this.waiting.size < this.window) return Promise.resolve();
    return new Promise((resolve) => this.roomWaiters.push(resolve));
  }

  /** Sends one syslog message; resolves with the receiver's answer, rejects if the session breaks first. */
  send(message: Buffer): Promise<RelpAnswer> {
    return this.request('syslog', message);
  }

  /** `close`, its answer, then the socket; bounded by the timeout, never throws. */
  async close(): Promise<void> {
    if (!this.broken) {
      try {
        await this.request('close');
      } catch {
        // The session ends either way.
      }
    }
    this.destroy();
  }

  destroy(): void {
    this.break(failure('ECONNRESET', 'RELP session closed'));
    this.socket.destroy();
  }

  private request(command: string, data?: Buffer): Promise<RelpAnswer> {
    if (this.broken) return Promise.reject(this.broken);
    const txnr = this.nextTxnr;
    this.nextTxnr = txnr >= MAX_TXNR ? 1 : txnr + 1;
    return new Promise<RelpAnswer>((resolve, reject) => {
      this.waiting.set(txnr, { resolve, reject });
      this.armTimer();
      this.socket.write(encodeRelpFrame(txnr, command, data));
    });
  }

  private onFrame(f: RelpFrame): void {
    if (f.command === 'serverclose') {
      this.break(failure('ECONNRESET', 'the receiver closed the RELP session (serverclose)'));
      return;
    }
    const w = f.command === 'rsp' ? this.waiting.get(f.txnr) : undefined;
    if (!w) {
      this.break(failure('E_RELP_PROTOCOL', `unexpected RELP ${f.command} for transaction ${f.txnr}`));
      return;
    }
    this.waiting.delete(f.txnr);
    this.armTimer();
    w.resolve(parseAnswer(f.data));
    const next = this.roomWaiters.shift();
    next?.();
  }

  /** The answer timer runs while anything waits, restarted by each answer. */
  private armTimer(): void {
    clearTimeout(this.timer);
    this.timer =
      this.waiting.size === 0
        ? undefined
        : setTimeout(() => this.break(failure('ETIMEDOUT', `no RELP answer within ${this.timeoutMs} ms`)), this.timeoutMs);
  }

  private break(e: TransportFailure): void {
    if (this.broken) return;
    this.broken = e;
    clearTimeout(this.timer);
    this.socket.destroy();
    for (const w of this.waiting.values()) w.reject(e);
    this.waiting.clear();
    for (const r of this.roomWaiters.splice(0)) r();
  }
}

/** `200 OK[\n offers…]`: the status and the first line's text (bounded, printable). */
function parseAnswer(data: Buffer): RelpAnswer {
  const line = data.subarray(0, 512).toString('utf8').split('\n', 1)[0] ?? '';
  const m = /^(\d{3})\s?(.*)$/.exec(line);
  const status = m?.[1] ?? '???';
  if (status === '200') return { ok: true };
  return { ok: false, status, text: (m?.[2] ?? line).replace(/[^\x20-\x7e]/g, '?').slice(0, 200) };
}
