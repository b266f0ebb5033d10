/**
 * The status page's data and actions in the daemon: the /status document (cluster-wide, from
 * Redis, computed by jobs/status.ts), each tenant's schedules and sink names from its config,
 * and the provisioning log. Actions are the operator commands' own operations (approve-deletes,
 * resume, trigger), offered only when daemon.ui.actionTokenFile is set.
 */
import { reconcilePattern } from '../config/reconcile-schedule.ts';
import type { Queue } from 'bullmq';
import type { LoadedConfig } from '../config/load.ts';
import type { Secret } from '../config/secret.ts';
import type { RedisClient } from '../jobs/redis.ts';
import { triggerRun } from '../jobs/schedulers.ts';
import { TenantState } from '../jobs/tenant-state.ts';
import type { Logger } from '../observability/logger.ts';
import { ConfigError } from '../errors.ts';
import { retentionOf } from '../provisioning-log/config-schema.ts';
import { RedisProvisioningLogStore } from '../provisioning-log/redis-store.ts';
import { MIN_TOKEN_LENGTH, tokenMatcher } from './actions.ts';
import type { ActionName, ChangeStreamView, LogFilter, RunView, TenantSummary, TenantView, UiActions, UiBackend } from './view.ts';

export interface DaemonUiDeps {
  tenants: ReadonlyMap<string, { id: string; loaded: LoadedConfig }>;
  redis: RedisClient;
  keyPrefix: string;
  reconcileQueue: Queue;
  /** The daemon's /status document. */
  status: () => Promise<unknown>;
  logger: Logger;
  /** daemon.ui.actionTokenFile's content; without it the page is read-only. */
  actionToken: Secret | undefined;
  logRecords: number;
}

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v !== null && typeof v === 'object' ? (v as Obj) : {});
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const num = (v: unknown): number | null => (typeof v === 'number' ? v : null);
const runs = (v: unknown): RunView[] => (Array.isArray(v) ? (v as RunView[]) : []);

export function daemonUiBackend(deps: DaemonUiDeps): UiBackend {
  const stores = new Map(
    [...deps.tenants.values()].map(
      (rt) =>
        [rt.id, new RedisProvisioningLogStore(deps.redis, deps.keyPrefix, rt.id, retentionOf(rt.loaded.config.provisioningLog))] as const,
    ),
  );
  const tenantDocs = async (): Promise<Map<string, Obj>> => {
    const doc = obj(await deps.status());
    const list = Array.isArray(doc['tenants']) ? (doc['tenants'] as unknown[]) : [];
    return new Map(list.map((t) => [String(obj(t)['tenant']), obj(t)] as const));
  };

  const backend: UiBackend = {
    tenantIds: () => [...deps.tenants.keys()].sort(),
    async summaries(): Promise<TenantSummary[]> {
      const docs = await tenantDocs();
      return backend.tenantIds().map((id) => {
        const t = docs.get(id) ?? {};
        return {
          tenant: id,
          lastReconcile: runs(obj(t['runs'])['reconcile'])[0] ?? null,
          nextReconcile: str(obj(t['nextRun'])['reconcile']),
          quarantined: t['quarantined'] === true,
          deletesHeld: num(t['deletesHeld']) ?? 0,
          auditLagSeconds: num(obj(t['audit'])['lagSeconds']),
        };
      });
    },
    async tenant(id: string, filter: LogFilter): Promise<TenantView> {
      const rt = deps.tenants.get(id)!;
      const cfg = rt.loaded.config;
      const store = stores.get(id)!;
      const t = (await tenantDocs()).get(id) ?? {};
      const held = t['heldDeletes'] ? (obj(t['heldDeletes']) as unknown as NonNullable<TenantView['held']>) : null;
      const [log, heldRecords, deliveredUpTo] = await Promise.all([
        store.query({ ...filter, limit: deps.logRecords }),
        // The newest batch of held records: runs that hold the same set again do not repeat it.
        held ? store.query({ result: 'held', limit: 500 }).then((rs) => rs.filter((r) => r.runId === rs[0]?.runId)) : Promise.resolve([]),
        store.deliveredUpTo(),
      ]);
      const audit = t['audit'] ? obj(t['audit']) : null;
      const auditRuns = runs(obj(t['runs'])['audit']);
      const lastDelivered = obj(auditRuns.find((r) => r.result === 'success')?.detail['delivered']);
      const deadLetters = obj(audit?.['deadLetters']) as Record<string, number>;
      const q = obj(t['quarantine']);
      const next = obj(t['nextRun']);
      return {
        tenant: id,
        schedules: (['reconcile', 'audit'] as const).map((kind) => ({
          kind,
          configured: kind === 'reconcile' ? cfg.provisioning !== undefined : cfg.audit !== undefined,
          pattern:
            kind === 'reconcile' ? reconcilePattern(cfg, str(obj(t['changes'])['mechanism']) !== null) : cfg.schedules.audit.pattern,
          enabled: cfg.schedules[kind].enabled,
          next: str(next[kind]),
        })),
        reconcileRuns: runs(obj(t['runs'])['reconcile']),
        auditRuns,
        managed: t['managed'] && typeof t['managed'] === 'object' ? (t['managed'] as { users: number; groups: number }) : null,
        held,
        heldRecords,
        quarantine: {
          quarantined: q['quarantined'] === true,
          failures: num(q['failures']) ?? 0,
          until: str(q['until']),
          reason: str(q['reason']) ?? '',
        },
        audit: audit
          ? { cursor: str(audit['cursor']), lagSeconds: num(audit['lagSeconds']), lastCommit: str(audit['lastCommit']), deadLetters }
          : null,
        sinks: (cfg.audit?.sinks ?? []).map((s) => ({
          name: s.name,
          type: s.type,
          lastDelivered: num(lastDelivered[s.name]),
          deadLetters: deadLetters[s.name] ?? 0,
        })),
        logToSinks: { enabled: cfg.provisioningLog.deliverToSinks && cfg.audit !== undefined, deliveredUpTo },
        log,
        changes: t['changes'] && typeof t['changes'] === 'object' ? (t['changes'] as ChangeStreamView) : null,
      };
    },
  };
  if (deps.actionToken !== undefined) backend.actions = daemonActions(deps, deps.actionToken);
  return backend;
}

function daemonActions(deps: DaemonUiDeps, token: Secret): UiActions {
  const value = token.reveal();
  if (value.length < MIN_TOKEN_LENGTH) {
    throw new ConfigError('the status page action token is too short', [
      `daemon.ui.actionTokenFile: the file must hold at least ${MIN_TOKEN_LENGTH} characters (e.g. openssl rand -hex 32)`,
    ]);
  }
  const matches = tokenMatcher(value);
  return {
    tokenMatches: matches,
    async run(tenant: string, action: ActionName): Promise<string> {
      const rt = deps.tenants.get(tenant)!;
      const state = new TenantState(deps.redis, deps.keyPrefix, tenant);
      const attempts = rt.loaded.config.daemon.jobAttempts;
      let message: string;
      if (action === 'approve-deletes') {
        const held = await state.approveHeld('status page');
        if (!held) message = 'nothing held';
        else {
          await triggerRun(deps.reconcileQueue, 'reconcile', tenant, attempts, 'approval');
          message = `approved ${held.count} held deletions`;
        }
      } else if (action === 'resume') {
        await state.clearQuarantine();
        await triggerRun(deps.reconcileQueue, 'reconcile', tenant, attempts);
        message = 'resumed';
      } else {
        await triggerRun(deps.reconcileQueue, 'reconcile', tenant, attempts);
        message = 'reconcile enqueued';
      }
      deps.logger.info({ tenant, action, outcome: message }, 'status page action');
      return message;
    },
  };
}
