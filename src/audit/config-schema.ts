import { z } from 'zod';

/** Placeholder until the audit export lands: the `audit` section of the config. */
export const auditSchema = z.strictObject({});
export type AuditConfig = z.infer<typeof auditSchema>;
