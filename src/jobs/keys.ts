/**
 * Every Redis key the daemon's provisioning side writes, built here and nowhere else
 * (the audit side has audit/state/redis-keys.ts). `{tenant}` is a hash tag: a tenant's
 * keys share one Cluster slot, so MULTI/Lua can touch several of them.
 */
export interface TenantKeys {
  /** Hash: platform user id → JSON LedgerEntry. */
  ledgerUsers: string;
  ledgerGroups: string;
  /** Hash: externalId → platform id (index of the two above). */
  ledgerUsersByExt: string;
  ledgerGroupsByExt: string;
  /** Set: `user:<externalId>` / `group:<externalId>` creates sent but not yet confirmed. */
  ledgerPending: string;
  /** String: when the one-shot ledger (state.dir) was imported into Redis (set once). */
  ledgerImported: string;
  /** Hash: user attribute name → JSON { id, created } (definitions this tool knows). */
  ledgerAttributeDefinitions: string;
  /** Hash: platform user id → JSON { readAt, values } (last read or written attribute values). */
  ledgerAttributeValues: string;
  /** Hash: failures, until (ms), reason, since (ms). */
  quarantine: string;
  /** Hash: count, reasons (JSON), at (ms), runId — deletes held by the guard until approved. */
  heldDeletes: string;
  /** String with TTL: an operator approved the held deletes for the next run. */
  approval: string;
  /** List (newest first) of JSON run records. */
  history(kind: 'reconcile' | 'audit'): string;
  /**
   * String with TTL, `<fencing token> <owner>`: the lease of the run in progress (one per tenant
   * and kind); `changes`: the replica that runs the tenant's change stream.
   */
  lease(kind: LeaseKind): string;
  /** Counter: the last fencing token issued for the lease (only ever grows). */
  fence(kind: LeaseKind): string;
  /** String: JSON array of tasks of one fanned-out chunk. */
  chunk(runId: string, phase: string, index: number): string;
  /** Hash: aggregated results of a fanned-out run. */
  runResult(runId: string): string;
  /** List: failures of a fanned-out run (JSON ApplyFailure). */
  runFailures(runId: string): string;
  /** Rate limiter key space (rate-limiter-flexible adds its own suffix). */
  rateLimit: string;
  /** Hash: the change stream's cursor and state (cursor, savedAt, lastPollAt, owner, …), shown by /status. */
  changeStream: string;
  /** Sorted set: destructive operations the change path applied (score: epoch ms), the guard's rolling window. */
  changeBurstWindow: string;
  /** String (JSON): destructive changes held by the rolling-window guard until approve-deletes. */
  changeBurstHold: string;
}

export type LeaseKind = 'reconcile' | 'audit' | 'changes';

export function tenantKeys(keyPrefix: string, tenant: string): TenantKeys {
  const base = `${keyPrefix}:{${tenant}}`;
  return {
    ledgerUsers: `${base}:ledger:users`,
    ledgerGroups: `${base}:ledger:groups`,
    ledgerUsersByExt: `${base}:ledger:users-by-ext`,
    ledgerGroupsByExt: `${base}:ledger:groups-by-ext`,
    ledgerPending: `${base}:ledger:pending`,
    ledgerImported: `${base}:ledger:imported`,
    ledgerAttributeDefinitions: `${base}:ledger:attribute-definitions`,
    ledgerAttributeValues: `${base}:ledger:attribute-values`,
    quarantine: `${base}:quarantine`,
    heldDeletes: `${base}:held-deletes`,
    approval: `${base}:approve-deletes`,
    history: (kind) => `${base}:history:${kind}`,
    lease: (kind) => `${base}:lease:${kind}`,
    fence: (kind) => `${base}:lease:${kind}:fence`,
    chunk: (runId, phase, index) => `${base}:run:${runId}:${phase}:${index}`,
    runResult: (runId) => `${base}:run:${runId}:result`,
    runFailures: (runId) => `${base}:run:${runId}:failures`,
    rateLimit: `${base}:rate`,
    changeStream: `${base}:changes:stream`,
    changeBurstWindow: `${base}:changes:burst-window`,
    changeBurstHold: `${base}:changes:burst-hold`,
  };
}

export const QUEUE_NAMES = {
  reconcile: 'reconcile',
  audit: 'audit-export',
  apply: 'reconcile-apply',
} as const;
export type QueueName = (typeof QUEUE_NAMES)[keyof typeof QUEUE_NAMES];
