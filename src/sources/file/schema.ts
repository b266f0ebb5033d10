import { z } from 'zod';

export const fileSourceSchema = z.strictObject({
  type: z.literal('file'),
  /** A YAML or JSON document with `users` and `groups`. Relative to the config file. */
  path: z.string().min(1),
});
export type FileSourceConfig = z.infer<typeof fileSourceSchema>;
