/**
 * Provisioning-log records of identity safety (reconcile.md, "Identity conflicts"):
 * - `user.conflict` (result `held`): a source person was not created (or renamed) because the
 *   userName is held by the account of someone else who is not in the source;
 * - a handover (`matching.handOverLeaverAccountsByName`) held whole by the deletion guard;
 * - `user.reassign` (result `ok`): an operator handed an account to another externalId.
 */
import type { Plan } from '../reconcile/plan-types.ts';
import type { NewRecord } from './record.ts';

type Base = Pick<NewRecord, 'time' | 'tenant' | 'runId'>;

/** One `user.conflict` record per conflict of the plan (written whether or not the guard holds anything). */
export function conflictRecords(tenant: string, runId: string, plan: Plan, now: number): NewRecord[] {
  const time = new Date(now).toISOString();
  return (plan.conflicts ?? []).map((k) => ({
    time,
    tenant,
    runId,
    action: 'user.conflict',
    result: 'held',
    object: { type: 'user', externalId: k.externalId, name: k.name, id: k.account.id },
    reason: `${k.reason}. Ways out: ${k.waysOut.join('; ')}`,
  }));
}

/** Handovers the guard holds: the whole handover waits, its reactivation or update too. */
export function heldHandoverRecords(base: Base & { result: 'held' }, plan: Plan, why: string): NewRecord[] {
  const out: NewRecord[] = [];
  for (const [action, list] of [
    ['user.update', plan.users.update],
    ['user.reactivate', plan.users.reactivate],
  ] as const) {
    for (const u of list) {
      if (u.handoverFrom === undefined) continue;
      out.push({
        ...base,
        action,
        object: { type: 'user', externalId: u.externalId, name: u.userName, id: u.id },
        changes: u.changes,
        reason: `handover of the account of ${u.handoverFrom} held whole (reactivation, attribute values, memberships); ${why}`,
      });
    }
  }
  return out;
}

/** The record of `ledger reassign`. */
export function reassignRecord(
  base: Base,
  a: { id: string; userName?: string | undefined; from: string; to: string; by?: string | undefined; note?: string | undefined },
): NewRecord {
  return {
    ...base,
    action: 'user.reassign',
    result: 'ok',
    object: { type: 'user', externalId: a.to, ...(a.userName !== undefined ? { name: a.userName } : {}), id: a.id },
    changes: [{ path: 'externalId', before: a.from, after: a.to }],
    reason: `ledger reassign: the account of ${a.from} handed over to ${a.to} on purpose (with its attribute values and group memberships)${a.by !== undefined ? ` by ${a.by}` : ''}${a.note !== undefined ? `: ${a.note}` : ''}`,
  };
}
