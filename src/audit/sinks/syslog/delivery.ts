/**
 * How a request's messages reach the receiver; one implementation per protocol family.
 * `deliver` resolves only once the receiver confirmed every message (per message: delivered,
 * or the receiver's refusal), and throws the retry loop's transient SyncError when its
 * budget is spent. Events that were sent on a broken connection and go out again are counted
 * as resent: the receiver may have kept the first copy.
 */
export type MessageOutcome = { delivered: true } | { delivered: false; code: string; reason: string };

export interface Delivery {
  deliver(messages: readonly Buffer[], signal?: AbortSignal): Promise<MessageOutcome[]>;
  close(): Promise<void>;
}

export const DELIVERED: MessageOutcome = { delivered: true };
