/**
 * The `provisioningLog` section (per tenant): how long records are kept and whether they go
 * to the audit sinks too. Reference: docs/provisioning-log.md.
 */
import { z } from 'zod';

export const provisioningLogSchema = z
  .strictObject({
    /** Records kept per tenant (the oldest go first). */
    maxEntries: z.number().int().min(100).max(10_000_000).default(200_000),
    /** Records older than this are dropped. */
    maxAgeDays: z.number().min(1).max(3650).default(90),
    /** Also deliver every record through `audit.sinks` as an event of kind `provisioning` (needs an audit section). */
    deliverToSinks: z.boolean().default(false),
  })
  .prefault({});

export type ProvisioningLogConfig = z.infer<typeof provisioningLogSchema>;

export function retentionOf(c: ProvisioningLogConfig): { maxEntries: number; maxAgeMs: number } {
  return { maxEntries: c.maxEntries, maxAgeMs: c.maxAgeDays * 86_400_000 };
}
