/**
 * What the ownership ledger makes of a plan, for operators: how many objects are managed and
 * how many source objects matched a platform object that is not (skipped). A plan whose
 * matches are all skipped as unmanaged while the ledger is empty is the signature of a lost
 * or not-yet-imported ledger (e.g. moving from one-shot to the daemon): it warns, naming the fix.
 */
import type { Logger } from '../observability/logger.ts';
import type { Plan } from './plan-types.ts';

export interface OwnershipCounts {
  /** Users + groups in the ledger (what the guard's percentage is relative to). */
  managed: number;
  skippedUnmanaged: { users: number; groups: number };
}

export function ownershipCounts(plan: Plan): OwnershipCounts {
  const unmanaged = plan.skipped.filter((k) => k.code === 'unmanaged');
  return {
    managed: plan.guard.managed,
    skippedUnmanaged: {
      users: unmanaged.filter((k) => k.kind === 'user').length,
      groups: unmanaged.filter((k) => k.kind === 'group').length,
    },
  };
}

/** The warning text, or undefined when the plan is not "every match skipped with an empty ledger". */
export function allUnmanagedWarning(plan: Plan, ledgerDescribe: string): string | undefined {
  const c = ownershipCounts(plan);
  const skipped = c.skippedUnmanaged.users + c.skippedUnmanaged.groups;
  if (c.managed > 0 || skipped === 0) return undefined;
  return (
    `${skipped} source objects (${c.skippedUnmanaged.users} users, ${c.skippedUnmanaged.groups} groups) match platform objects this tool does not manage, and the ownership ledger (${ledgerDescribe}) is empty: ` +
    'they are all skipped. If this tool provisioned them before (e.g. with the one-shot commands and state.dir), import that ledger: scim-audit-sync ledger import --config FILE; ' +
    'to take over objects created by someone else, set provisioning.matching.adoptExisting: true'
  );
}

export function warnIfAllUnmanaged(plan: Plan, ledgerDescribe: string, logger: Logger): void {
  const text = allUnmanagedWarning(plan, ledgerDescribe);
  if (text !== undefined) logger.warn({ tenant: plan.tenant, ...ownershipCounts(plan) }, text);
}
