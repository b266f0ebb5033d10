/** Growing byte buffers (the file sink's line buffer, the dedupe set's pending keys). */

/** A larger copy of `buf` holding at least `bytes` (at least twice its size), its first `keep` bytes copied. */
export function grownBuffer(buf: Buffer, bytes: number, keep: number): Buffer {
  const next = Buffer.allocUnsafeSlow(Math.max(2 * buf.length, bytes));
  buf.copy(next, 0, 0, keep);
  return next;
}
