/**
 * A parsed frame handed to the reader's handler: bad rows and records in file order, the
 * first record of the body as the header, each record's values cut from the frame's text.
 */
import { HASH_CHARS, type BadRow, type Frame, type FramedBadRow } from './frame-parser.ts';
import type { CsvHandler } from './read-csv.ts';

export class FrameDelivery {
  private header = true;

  /** Bad rows and records of one frame, in file order. */
  async deliver(frame: Frame, handler: CsvHandler): Promise<void> {
    const { text, ends, firsts, lines, bad, hashes } = frame;
    let b = 0;
    for (let r = 0; r < frame.records; r++) {
      while (b < bad.length && (bad[b] as FramedBadRow).before <= r) {
        const p = handler.bad(badRow(bad[b++] as FramedBadRow));
        if (p) await p;
      }
      const first = firsts[r] as number;
      const last = firsts[r + 1] as number;
      const values = new Array<string>(last - first);
      for (let j = first, from = first === 0 ? 0 : (ends[first - 1] as number); j < last; j++) {
        const to = ends[j] as number;
        values[j - first] = text.slice(from, to);
        from = to;
      }
      if (this.header) {
        this.header = false;
        handler.header(values);
        continue;
      }
      const p = handler.row(values, lines[r] as number, hashes === '' ? undefined : hashes.slice(r * HASH_CHARS, (r + 1) * HASH_CHARS));
      if (p) await p;
    }
    while (b < bad.length) {
      const p = handler.bad(badRow(bad[b++] as FramedBadRow));
      if (p) await p;
    }
  }
}

/** The row without its place in the frame. */
function badRow(b: FramedBadRow): BadRow {
  return { line: b.line, raw: b.raw, code: b.code, reason: b.reason };
}
