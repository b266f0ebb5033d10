/**
 * The parse thread: one FrameParser per export body, chunks in, frames out, in order.
 * Messages (see csv-thread.ts): `start`, `chunk` (the bytes, transferred), `end`; answers
 * `frame` per chunk, a last `frame` with `done`, or `error`.
 */
import { parentPort } from 'node:worker_threads';
import { FrameParser } from './frame-parser.ts';
import type { ToParser, FromParser } from './messages.ts';

const port = parentPort;
if (!port) throw new Error('parse-worker.ts runs as a worker thread');

let parser: FrameParser | undefined;

function send(m: FromParser): void {
  port!.postMessage(m);
}

function fail(e: unknown): void {
  parser = undefined;
  const err = e as { code?: unknown; message?: unknown };
  send({ t: 'error', code: typeof err.code === 'string' ? err.code : 'CSV_ERROR', message: String(err.message ?? e) });
}

port.on('message', (m: ToParser) => {
  try {
    if (m.t === 'start') {
      parser = new FrameParser({ idColumn: m.idColumn });
      return;
    }
    if (!parser) return; // after a failure: the rest of that body is ignored
    if (m.t === 'chunk') {
      send({ t: 'frame', frame: parser.write(Buffer.from(m.bytes)), done: false });
      return;
    }
    const p = parser;
    parser = undefined;
    p.end().then((frame) => send({ t: 'frame', frame, done: true }), fail);
  } catch (e) {
    fail(e);
  }
});
