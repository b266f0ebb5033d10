/** `daemon.ui`: the status page. Without `actionTokenFile` the page is read-only. */
import { z } from 'zod';
import { secretFile } from '../config/file-refs.ts';

export const uiSchema = z
  .strictObject({
    /** Serve /ui (read-only unless actionTokenFile is set). */
    enabled: z.boolean().default(true),
    /** File holding the token that actions on the page (approve held deletions, resume, trigger) require; at least 16 characters. */
    actionTokenFile: secretFile().optional(),
    /** Provisioning-log records shown per tenant (newest first). */
    logRecords: z.number().int().min(1).max(1000).default(50),
  })
  .prefault({});

export type UiConfig = z.infer<typeof uiSchema>;
