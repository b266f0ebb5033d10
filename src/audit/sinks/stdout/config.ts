import { z } from 'zod';
import { sinkBase } from '../common-config.ts';

/** NDJSON to the process's standard output (or the stream the caller injects). */
export const stdoutSinkSchema = z.strictObject({
  type: z.literal('stdout'),
  ...sinkBase({ maxEvents: 1000, maxBytes: 1024 * 1024 }),
});
export type StdoutSinkConfig = z.infer<typeof stdoutSinkSchema>;
