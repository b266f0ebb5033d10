/** Crash-safe JSON files: write a temp file, fsync it, rename over the target, fsync the directory. */
import { mkdir, open, readFile, rename } from 'node:fs/promises';
import { dirname } from 'node:path';

export async function readJsonFile<T>(path: string): Promise<T | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
  return JSON.parse(text) as T;
}

export async function writeJsonFileAtomic(path: string, value: unknown): Promise<void> {
  await writeFileAtomic(path, [Buffer.from(JSON.stringify(value))]);
}

/** The same for bytes given a piece at a time (a large document never becomes one string). */
export async function writeFileAtomic(path: string, pieces: Iterable<Buffer>): Promise<void> {
  const dir = dirname(path);
  await mkdir(dir, { recursive: true });
  const tmp = `${path}.${process.pid}.${Date.now()}.tmp`;
  const fh = await open(tmp, 'w', 0o600);
  try {
    // Pieces go out in writes of about a megabyte: few trips through the thread pool, little held.
    let batch: Buffer[] = [];
    let bytes = 0;
    const flush = async (): Promise<void> => {
      const { bytesWritten } = await fh.writev(batch);
      // A short write (rare on a regular file): the rest, until all of it is out.
      let rest = bytesWritten < bytes ? Buffer.concat(batch).subarray(bytesWritten) : undefined;
      while (rest && rest.length > 0) rest = rest.subarray((await fh.write(rest)).bytesWritten);
      batch = [];
      bytes = 0;
    };
    for (const piece of pieces) {
      batch.push(piece);
      bytes += piece.length;
      if (bytes >= 1024 * 1024) await flush();
    }
    if (batch.length > 0) await flush();
    await fh.sync();
  } finally {
    await fh.close();
  }
  await rename(tmp, path);
  const dh = await open(dir, 'r');
  try {
    await dh.sync();
  } finally {
    await dh.close();
  }
}
