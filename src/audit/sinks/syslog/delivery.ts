/**
 * How a request's messages reach the receiver; one implementation per protocol family.
 * `deliver` resolves only once the receiver confirmed every message (per message: delivered,
 * or the receiver's refusal). When the retry budget is spent it throws `UnconfirmedError`:
 * the retry loop's transient SyncError, carrying what the receiver did confirm before it
 * went away, so the sink can dead-letter exactly the rest. Events that were sent on a broken
 * connection and go out again are counted as resent: the receiver may have kept the first copy.
 */
import { SyncError, isSyncError } from '../../../errors.ts';

export type MessageOutcome = { delivered: true } | { delivered: false; code: string; reason: string };

export interface DeliverOptions {
  signal?: AbortSignal | undefined;
  /** Attempts for this request instead of the policy's `maxAttempts` (a receiver known to be down gets one). */
  maxAttempts?: number | undefined;
}

export interface Delivery {
  deliver(messages: readonly Buffer[], opts?: DeliverOptions): Promise<MessageOutcome[]>;
  close(): Promise<void>;
}

export const DELIVERED: MessageOutcome = { delivered: true };

/**
 * The receiver could not be reached or did not confirm within the retry budget. Same code,
 * kind and message as the retry loop's error; `outcomes[i]` is set for the messages the
 * receiver answered (RELP) and undefined for every unconfirmed one.
 */
export class UnconfirmedError extends SyncError {
  readonly outcomes: ReadonlyArray<MessageOutcome | undefined>;
  constructor(cause: SyncError, outcomes: ReadonlyArray<MessageOutcome | undefined>) {
    super(cause.code, cause.kind, cause.message, { cause });
    this.name = 'UnconfirmedError';
    this.outcomes = outcomes;
  }
}

/**
 * Awaits a delivery's retry loop; a spent budget (the loop's transient SyncError) becomes an
 * UnconfirmedError with the outcomes known so far. Fatal errors and aborts pass unchanged.
 */
export async function confirmOrReport<T>(
  pending: Promise<T>,
  outcomes: () => ReadonlyArray<MessageOutcome | undefined>,
  signal: AbortSignal | undefined,
): Promise<T> {
  try {
    return await pending;
  } catch (e) {
    if (signal?.aborted || !isSyncError(e) || e.kind !== 'transient') throw e;
    throw new UnconfirmedError(e, outcomes());
  }
}
