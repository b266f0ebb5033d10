/**
 * The parse thread: one FrameParser per export body, chunks in, frames out, in order.
 * Messages (messages.ts): `start`, `chunk` (the bytes, transferred), `end`; answers
 * `frame` per chunk, a last `frame` with `done`, or `error`.
 */
import { parentPort } from 'node:worker_threads';
import { errorCodeOf } from '../../platform/errors.ts';
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
  send({ t: 'error', code: errorCodeOf(e) ?? 'CSV_ERROR', message: e instanceof Error ? e.message : String(e) });
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
