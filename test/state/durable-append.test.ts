/**
 * Durable appends (src/state/durable-append.ts): the bytes land at the end of the file, all
 * of them, and a durable file is opened with O_DSYNC where the platform has it, so each write
 * returns once it is on disk. The open flags are read back from the kernel (/proc/self/fdinfo).
 */
import { constants } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openAppend } from '../../src/state/durable-append.ts';

let dir: string | undefined;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

/** The open flags of a descriptor as the kernel reports them (Linux), undefined elsewhere. */
async function kernelFlags(fd: number): Promise<number | undefined> {
  try {
    const m = /^flags:\s+([0-7]+)/m.exec(await readFile(`/proc/self/fdinfo/${fd}`, 'utf8'));
    return m ? Number.parseInt(m[1] as string, 8) : undefined;
  } catch {
    return undefined;
  }
}

describe('openAppend', () => {
  it('appends after what the file held, every byte of every write, creating it with the mode given', async () => {
    dir = await mkdtemp(join(tmpdir(), 'append-'));
    const path = join(dir, 'log');
    await writeFile(path, 'first\n');
    const file = await openAppend(path, true);
    const big = Buffer.alloc(3 * 1024 * 1024, 'x');
    expect(await file.append(Buffer.from('second\n'))).toBe(7);
    expect(await file.append(big)).toBe(big.length);
    await file.handle.close();
    const text = await readFile(path, 'utf8');
    expect(text.startsWith('first\nsecond\nxxx')).toBe(true);
    expect(text.length).toBe(13 + big.length);

    const created = await openAppend(join(dir, 'new'), false, 0o640);
    expect(((await created.handle.stat()).mode & 0o777).toString(8)).toBe('640');
    await created.handle.close();
  });

  it('a durable file is opened O_DSYNC (each write on disk when it returns); a plain one is not', async () => {
    if (constants.O_DSYNC === undefined || (await kernelFlags(0)) === undefined) return; // not Linux: nothing to read back
    dir = await mkdtemp(join(tmpdir(), 'append-'));
    const durable = await openAppend(join(dir, 'a'), true);
    const plain = await openAppend(join(dir, 'b'), false);
    try {
      const d = (await kernelFlags(durable.handle.fd)) as number;
      const p = (await kernelFlags(plain.handle.fd)) as number;
      expect(d & constants.O_DSYNC).toBe(constants.O_DSYNC);
      expect(d & constants.O_APPEND).toBe(constants.O_APPEND);
      expect(p & constants.O_DSYNC).toBe(0);
      expect(p & constants.O_APPEND).toBe(constants.O_APPEND);
    } finally {
      await durable.handle.close();
      await plain.handle.close();
    }
  });
});
