/**
 * A crash (or a failed write) in the middle of an append leaves a last line without its
 * newline. That line was never acknowledged, so the engine will send its event again:
 * cut it off so the file stays one valid JSON document per line.
 */
import { open } from 'node:fs/promises';

const BLOCK = 64 * 1024; // bytes read per step backwards

/** Truncates after the last newline; returns the number of bytes removed (0 if the file was clean or absent). */
export async function repairTornLine(path: string, fsync: boolean): Promise<number> {
  let fh;
  try {
    fh = await open(path, 'r+');
  } catch (e) {
    if ((e as { code?: unknown }).code === 'ENOENT') return 0;
    throw e;
  }
  try {
    const { size } = await fh.stat();
    if (size === 0) return 0;
    const buf = Buffer.alloc(Math.min(BLOCK, size));
    let end = size;
    let keep = 0;
    while (end > 0) {
      const start = Math.max(0, end - BLOCK);
      const len = end - start;
      await fh.read(buf, 0, len, start);
      const nl = buf.subarray(0, len).lastIndexOf(0x0a);
      if (nl >= 0) {
        keep = start + nl + 1;
        break;
      }
      end = start;
    }
    if (keep === size) return 0;
    await fh.truncate(keep);
    if (fsync) await fh.datasync();
    return size - keep;
  } finally {
    await fh.close();
  }
}
