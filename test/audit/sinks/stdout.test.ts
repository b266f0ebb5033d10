import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { makeEvents, openSink } from './fixtures.ts';
import { eventDoc } from '../../../src/audit/event.ts';

/** A writable that takes `delayMs` per chunk and has a tiny buffer, like a slow pipe. */
function slowWritable(delayMs: number) {
  const received: Buffer[] = [];
  let maxBuffered = 0;
  let drains = 0;
  const stream = new Writable({
    highWaterMark: 64,
    write(chunk: Buffer, _enc, cb) {
      maxBuffered = Math.max(maxBuffered, stream.writableLength);
      setTimeout(() => {
        received.push(chunk);
        cb();
      }, delayMs);
    },
  });
  stream.on('drain', () => drains++);
  return { stream, received, stats: () => ({ maxBuffered, drains }) };
}

describe('stdout sink', () => {
  it('writes NDJSON, waits for drain and acknowledges only after the stream consumed every byte', async () => {
    const out = slowWritable(15);
    const sink = await openSink({ name: 'console', type: 'stdout', batch: { maxEvents: 2 } }, { stdout: out.stream });
    const events = makeEvents(6);
    const pending = sink.write(events);
    let acked = false;
    void pending.then(() => (acked = true));
    await new Promise((r) => setTimeout(r, 20));
    expect(acked).toBe(false);
    const res = await pending;
    expect(res).toEqual({ delivered: 6, rejected: [] });
    // Every chunk reached the slow consumer before the ack.
    const text = Buffer.concat(out.received).toString('utf8');
    expect(
      text
        .split('\n')
        .filter(Boolean)
        .map((l) => (JSON.parse(l) as Record<string, unknown>)['event.id']),
    ).toEqual(events.map((e) => eventDoc(e)['event.id']));
    // Backpressure: each 2-event chunk overflowed the 64-byte buffer and was waited for.
    expect(out.stats().drains).toBe(3);
    // Never more than one chunk in flight.
    expect(out.stats().maxBuffered).toBeLessThanOrEqual(Buffer.byteLength(text) / 2);
    await sink.close();
  });

  it('turns a stream error into a transient SyncError', async () => {
    const stream = new Writable({
      write(_c, _e, cb) {
        cb(Object.assign(new Error('broken pipe'), { code: 'EPIPE' }));
      },
    });
    stream.on('error', () => undefined);
    const sink = await openSink({ name: 'console', type: 'stdout' }, { stdout: stream });
    await expect(sink.write(makeEvents(1))).rejects.toMatchObject({ kind: 'transient', message: expect.stringContaining('EPIPE') });
  });
});
