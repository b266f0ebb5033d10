import { z } from 'zod';
import { sinkBase } from '../common-config.ts';

/** NDJSON to a local file with size/time rotation and key-aware resume. */
export const fileSinkSchema = z.strictObject({
  type: z.literal('file'),
  ...sinkBase({ maxEvents: 1000, maxBytes: 4 * 1024 * 1024 }),
  /** Relative paths are resolved against the config file's directory. */
  path: z.string().min(1),
  /** Rotate when the current file would grow past this size; 0 = never by size. */
  rotateMaxBytes: z
    .number()
    .int()
    .min(0)
    .default(100 * 1024 * 1024),
  /** Rotate when the current file is older than this; 0 = never by time. */
  rotateEveryMinutes: z.number().int().min(0).default(0),
  /** Rotated files to keep (oldest deleted first); 0 = keep all. */
  maxFiles: z.number().int().min(0).default(0),
  /** fdatasync before acknowledging; turning it off trades durability for speed. */
  fsync: z.boolean().default(true),
  /** Octal file mode for new files. */
  mode: z.number().int().min(0).max(0o777).default(0o640),
});
export type FileSinkConfig = z.infer<typeof fileSinkSchema>;
