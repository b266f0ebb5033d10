/** Audit events for sink tests: deterministic keys, timestamps and documents. */
import { eventFromDoc, type AuditEvent } from '../../../src/audit/event.ts';
import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';
import { createSink, sinkConfigSchema, type SinkContext, type SinkConfigInput } from '../../../src/audit/sinks/registry.ts';
import type { Sink, SinkObserver } from '../../../src/audit/sinks/sink.ts';

export const T0 = Date.UTC(2026, 0, 15, 10, 0, 0, 0);

export function makeEvent(i: number, extra: Record<string, unknown> = {}, tsMs = T0 + i * 1000): AuditEvent {
  const doc: Record<string, unknown> = {
    '@timestamp': new Date(tsMs).toISOString(),
    'event.id': `evt-${i}`,
    'event.action': 'user.login',
    'user.email': `user${i}@example.com`,
    'source.ip': '10.0.0.1',
    ...extra,
  };
  return eventFromDoc(`evt-${i}`, tsMs, doc);
}

export function makeEvents(n: number, from = 0): AuditEvent[] {
  return Array.from({ length: n }, (_, i) => makeEvent(from + i));
}

/** Zero jitter and tiny delays so retry tests take milliseconds. */
export const FAST_RETRY = { maxAttempts: 4, baseDelayMs: 5, maxDelayMs: 20, maxRetryAfterSeconds: 2 };

/** A pino logger writing into memory, so tests can search every line it produced. */
export function memoryLogger(): { logger: Logger; text: () => string } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(chunk.toString('utf8'));
      cb();
    },
  });
  return { logger: pino({ level: 'trace' }, stream), text: () => lines.join('') };
}

export interface Recorded {
  retries: Array<{ attempt: number; delayMs: number; reason: string }>;
  errors: Array<{ code: string; message: string }>;
}

export function recordingObserver(): SinkObserver & Recorded {
  const retries: Recorded['retries'] = [];
  const errors: Recorded['errors'] = [];
  return {
    retries,
    errors,
    onRetry: (e) => retries.push({ attempt: e.attempt, delayMs: e.delayMs, reason: e.reason }),
    onError: (e) => errors.push({ code: e.code, message: e.message }),
  };
}

/** Parse a raw config like the loader would, then build and open the sink. */
export async function openSink(raw: SinkConfigInput, ctx: Partial<SinkContext> = {}): Promise<Sink> {
  const sink = createSink(sinkConfigSchema.parse(raw), { configDir: process.cwd(), random: () => 0, ...ctx });
  await sink.open();
  return sink;
}

/** The rejection a promise ends with (fails the test if it resolves). */
export async function rejectionOf(p: Promise<unknown>): Promise<Error & { code?: string; kind?: string }> {
  try {
    await p;
  } catch (e) {
    return e as Error & { code?: string; kind?: string };
  }
  throw new Error('expected the promise to reject');
}
