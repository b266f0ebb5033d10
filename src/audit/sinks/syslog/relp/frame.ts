/**
 * RELP frames (rsyslog's Reliable Event Logging Protocol, as librelp speaks it):
 * `TXNR SP COMMAND SP DATALEN [SP DATA] LF`, TXNR 1–999999999, COMMAND lower-case letters,
 * DATALEN the byte length of DATA (no `SP DATA` when it is 0). The parser treats what the
 * receiver sends as hostile: bounded header, bounded data, anything else is a protocol error.
 */
export interface RelpFrame {
  txnr: number;
  command: string;
  data: Buffer;
}

export const MAX_TXNR = 999_999_999;

export function encodeRelpFrame(txnr: number, command: string, data?: Buffer): Buffer {
  const len = data?.length ?? 0;
  const head = Buffer.from(len === 0 ? `${txnr} ${command} 0` : `${txnr} ${command} ${len} `, 'ascii');
  return len === 0 || !data ? Buffer.concat([head, LF]) : Buffer.concat([head, data, LF]);
}

export class RelpProtocolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RelpProtocolError';
  }
}

/** Longest header: 9-digit txnr, 32-letter command, 9-digit length and three separators. */
const MAX_HEADER = 9 + 1 + 32 + 1 + 9 + 1;
const HEADER = /^(\d{1,9}) ([a-z]{1,32}) (\d{1,9})([ \n])/;
const PARTIAL = /^\d{0,9}(?: [a-z]{0,32}(?: \d{0,9})?)?$/;
const LF = Buffer.from('\n');

export class RelpParser {
  private buf: Buffer = Buffer.alloc(0);
  private readonly maxDataBytes: number;

  constructor(maxDataBytes: number) {
    this.maxDataBytes = maxDataBytes;
  }

  /** Frames completed by `chunk`; throws RelpProtocolError on anything that is not RELP. */
  push(chunk: Buffer): RelpFrame[] {
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
    const out: RelpFrame[] = [];
    for (;;) {
      const head = this.buf.subarray(0, MAX_HEADER).toString('latin1');
      const m = HEADER.exec(head);
      if (!m) {
        if (this.buf.length >= MAX_HEADER || !PARTIAL.test(head))
          throw new RelpProtocolError(`not a RELP frame header: ${JSON.stringify(head.slice(0, 24))}`);
        return out;
      }
      const len = Number(m[3]);
      if (len > this.maxDataBytes) throw new RelpProtocolError(`RELP frame of ${len} bytes exceeds ${this.maxDataBytes}`);
      const start = m[0].length;
      let end: number;
      let data: Buffer;
      if (len === 0) {
        // `N cmd 0\n`, or `N cmd 0 \n` from lenient peers.
        if (m[4] === '\n') end = start;
        else {
          if (this.buf.length < start + 1) return out;
          if (this.buf[start] !== 0x0a) throw new RelpProtocolError('RELP frame with no data lacks its trailer');
          end = start + 1;
        }
        data = Buffer.alloc(0);
      } else {
        if (m[4] !== ' ') throw new RelpProtocolError('RELP frame data must follow a space');
        if (this.buf.length < start + len + 1) return out;
        if (this.buf[start + len] !== 0x0a) throw new RelpProtocolError('RELP frame trailer is not LF');
        data = Buffer.from(this.buf.subarray(start, start + len));
        end = start + len + 1;
      }
      out.push({ txnr: Number(m[1]), command: m[2] ?? '', data });
      this.buf = this.buf.subarray(end);
      if (this.buf.length === 0) return out;
    }
  }
}
