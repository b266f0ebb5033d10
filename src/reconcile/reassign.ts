/**
 * `ledger reassign --from A --to B`: the operator's way to hand an account over on purpose,
 * when A and B are the same person (an HR id migration, a rehire under a new employee id).
 * The ledger's entry for A's account now names B; the next apply writes B as the account's
 * externalId and the account keeps what it has (attribute values, group memberships): that is
 * the point of doing it on purpose. Never done implicitly (reconcile.md, "Identity conflicts").
 * Pure: decides what to change, the caller writes it to its store.
 */
import { ConfigError } from '../errors.ts';
import type { LedgerData } from './ledger.ts';

export interface ReassignPlan {
  /** Platform ids of the accounts the ledger gives to `from` (usually one). */
  ids: string[];
}

export function planReassign(data: LedgerData | undefined, from: string, to: string): ReassignPlan {
  if (from === to) throw new ConfigError('--from and --to are the same externalId', ['--to: the externalId the account now belongs to']);
  const users = Object.entries(data?.users ?? {});
  const ids = users.filter(([, e]) => e.externalId === from).map(([id]) => id);
  if (ids.length === 0)
    throw new ConfigError(`the ledger has no account of ${from}`, [
      "--from: the externalId the account belongs to now (the plan's conflicts name it as the owner; `ledger export` lists the ledger)",
    ]);
  const taken = users.filter(([, e]) => e.externalId === to).map(([id]) => id);
  if (taken.length > 0)
    throw new ConfigError(`${to} already has an account in the ledger (${taken.join(', ')}): it would have two`, [
      `--to: an externalId without an account; to give ${to} this account instead, delete the other one first (the next run forgets it)`,
    ]);
  return { ids };
}
