/**
 * What the status page shows, as plain data: read from the /status document (the same
 * cluster-wide facts `scim-audit-sync status` prints), the tenant's config (schedules, sink
 * names and types — never URLs or credentials) and the provisioning log.
 */
import type { ProvisioningRecord, RecordResult } from '../provisioning-log/record.ts';

export interface RunView {
  runId: string;
  result: string;
  startedAt: string;
  finishedAt: string;
  durationMs: number;
  detail: Record<string, unknown>;
}

export interface TenantSummary {
  tenant: string;
  lastReconcile: RunView | null;
  nextReconcile: string | null;
  quarantined: boolean;
  deletesHeld: number;
  auditLagSeconds: number | null;
}

export interface SinkView {
  name: string;
  type: string;
  /** Events the sink acknowledged in the last audit run (null: no run yet). */
  lastDelivered: number | null;
  deadLetters: number;
}

/** The tenant's change stream (docs/daemon.md, "Change-driven sync"), from the /status document. */
export interface ChangeStreamView {
  /** `running` (a replica holds the stream), `stopped`, `off` (the source reports no changes). */
  state: string;
  mechanism: string | null;
  owner: string | null;
  lastPollAt: string | null;
  lagSeconds: number | null;
  cursorAgeSeconds: number | null;
  lastResult: string | null;
  /** Why the stream last left changes to a full reconcile (a stable code). */
  lastDeferred: { code: string; at: string | null } | null;
  heldBurst: { destructive: number; memberRemovals: number; reasons: string[]; at: string | null } | null;
}

export interface TenantView {
  tenant: string;
  schedules: Array<{ kind: 'reconcile' | 'audit'; configured: boolean; pattern: string; enabled: boolean; next: string | null }>;
  reconcileRuns: RunView[];
  auditRuns: RunView[];
  managed: { users: number; groups: number } | null;
  held: { count: number; reasons: string[]; at: string; runId: string; approved: boolean } | null;
  heldRecords: ProvisioningRecord[];
  quarantine: { quarantined: boolean; failures: number; until: string | null; reason: string };
  audit: { cursor: string | null; lagSeconds: number | null; lastCommit: string | null; deadLetters: Record<string, number> } | null;
  sinks: SinkView[];
  logToSinks: { enabled: boolean; deliveredUpTo: string | null };
  log: ProvisioningRecord[];
  /** Absent for a tenant without provisioning. */
  changes?: ChangeStreamView | null;
}

export interface LogFilter {
  user?: string;
  result?: RecordResult;
  action?: string;
}

/** The data the page needs; the daemon implements it (src/ui/daemon-backend.ts). */
export interface UiBackend {
  tenantIds(): string[];
  summaries(): Promise<TenantSummary[]>;
  tenant(id: string, filter: LogFilter): Promise<TenantView>;
  /** Present only when daemon.ui.actionTokenFile is set. */
  actions?: UiActions;
}

export type ActionName = 'approve-deletes' | 'resume' | 'trigger';

export interface UiActions {
  /** Compares in constant time; never logs or returns the token. */
  tokenMatches(candidate: string): boolean;
  run(tenant: string, action: ActionName): Promise<string>;
}
