/**
 * Files appended to durably (the audit file sink, the audit state journal). Where the platform
 * has O_DSYNC (Linux, macOS), the file is opened with it and each write returns once its data
 * is on disk: one system call, so one trip through libuv's thread pool and one turn of the
 * event loop, instead of a write and then an fdatasync issued only when the loop next turns.
 * While the export parses the next batch the loop turns rarely, and the fdatasync waited for
 * that: ~3 s of a 1M-event export's 14 s were spent waiting for the sink (bench:audit,
 * docs/audit.md#performance). Elsewhere: append, then fdatasync.
 */
import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';

const O_DSYNC: number | undefined = constants.O_DSYNC;

export interface AppendFile {
  readonly handle: FileHandle;
  /** Appends `data` (all of it) at the end of the file; with `durable`, returns once it is on disk. */
  append(data: Uint8Array): Promise<number>;
}

/** Opens (creating) `path` for appending; `durable`: every append is on disk when it returns. */
export async function openAppend(path: string, durable: boolean, mode = 0o600): Promise<AppendFile> {
  const dsync = durable && O_DSYNC !== undefined;
  const flags = dsync ? constants.O_WRONLY | constants.O_CREAT | constants.O_APPEND | (O_DSYNC as number) : 'a';
  const handle = await open(path, flags, mode);
  return {
    handle,
    async append(data: Uint8Array): Promise<number> {
      let off = 0;
      while (off < data.length) {
        const { bytesWritten } = await handle.write(data, off, data.length - off, null);
        off += bytesWritten;
      }
      if (durable && !dsync) await handle.datasync();
      return off;
    },
  };
}
