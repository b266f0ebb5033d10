import type { Logger } from 'pino';
import type { SinkObserver } from './sink.ts';

/** What a sink gets from the daemon besides its own config. */
export interface SinkContext {
  /** Directory of the config file: relative paths (file sink path, secret files, CA files) resolve against it. */
  configDir: string;
  logger?: Logger;
  observer?: SinkObserver;
  /** The stdout sink's stream; defaults to process.stdout. */
  stdout?: NodeJS.WritableStream;
  /** Test seam: wall clock in epoch milliseconds (file rotation). */
  now?: () => number;
  /** Test seam: jitter source for backoff. */
  random?: () => number;
}
