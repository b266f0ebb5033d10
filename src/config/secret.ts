/**
 * A credential that is easy to use and hard to leak: every way of turning it into text
 * (template strings, JSON.stringify, console.log/util.inspect, pino) yields `[redacted]`.
 * Only an explicit `.reveal()` returns the value, so a grep for `reveal(` finds every use.
 */
import { inspect } from 'node:util';

export const REDACTED = '[redacted]';

export class Secret {
  readonly #value: string;
  /** Where the value came from (`platform.tokenFile`), for messages; never the value. */
  readonly source: string;

  constructor(value: string, source: string) {
    this.#value = value;
    this.source = source;
    Object.freeze(this);
  }

  reveal(): string {
    return this.#value;
  }

  toString(): string {
    return REDACTED;
  }

  toJSON(): string {
    return REDACTED;
  }

  [inspect.custom](): string {
    return `Secret(${REDACTED} from ${this.source})`;
  }

  [Symbol.toPrimitive](): string {
    return REDACTED;
  }
}
