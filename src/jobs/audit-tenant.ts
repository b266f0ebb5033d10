/**
 * What the audit jobs (export and verify) share: the tenant's audit config for a job, and the
 * error codes a retry cannot fix (a config or credential change can), which end the job at once.
 */
import { UnrecoverableError } from 'bullmq';
import type { AuditConfig } from '../audit/config-schema.ts';
import { ErrorCodes, isSyncError } from '../errors.ts';
import type { TenantRuntime } from './tenant-runtime.ts';

const UNRECOVERABLE = new Set<string>([
  ErrorCodes.CONFIG_INVALID,
  ErrorCodes.AUTH_INVALID,
  ErrorCodes.AUTH_FORBIDDEN,
  ErrorCodes.INSECURE_URL,
  ErrorCodes.FEATURE_DISABLED,
]);

export function isUnrecoverableAuditError(e: unknown): boolean {
  return isSyncError(e) && UNRECOVERABLE.has(e.code);
}

/** The runtime and audit config of a job's tenant; a tenant without either ends the job unretried. */
export function auditTenant(tenants: ReadonlyMap<string, TenantRuntime>, tenant: string): { rt: TenantRuntime; audit: AuditConfig } {
  const rt = tenants.get(tenant);
  if (!rt) throw new UnrecoverableError(`tenant ${tenant} is not configured`);
  const audit = rt.loaded.config.audit;
  if (!audit) throw new UnrecoverableError(`tenant ${tenant} has no audit section`);
  return { rt, audit };
}
