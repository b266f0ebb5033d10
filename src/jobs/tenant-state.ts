/**
 * What the daemon remembers per tenant between runs, in Redis: the run lease with its fencing
 * token (at most one reconcile per tenant applies changes at any moment, see lease.ts), quarantine, deletes
 * held by the guard and their approval, and the run history shown by /status.
 */
import type { DaemonConfig } from '../config/schema.ts';
import type { DeleteApproval } from '../reconcile/plan-types.ts';
import type { RedisClient } from './redis.ts';
import { tenantKeys, type LeaseKind, type TenantKeys } from './keys.ts';
import { acquireRunLease, type RunLease } from './lease.ts';

export interface RunRecord {
  runId: string;
  kind: 'reconcile' | 'audit';
  /** success | partial | failed | guard_held | skipped | quarantined | lease_lost */
  result: string;
  startedAt: string;
  finishedAt: string;
  durationMs: number;
  /** Short, secret-free description (counts, error code and message). */
  detail: Record<string, unknown>;
  /** The run's trace (W3C trace id) when tracing is on: the status page links the run to it. */
  traceId?: string;
}

/** Builds the records of one run: same id, kind, start and trace for every outcome it may end with. */
export function runRecorder(
  runId: string,
  kind: RunRecord['kind'],
  startedMs: number,
  traceId = '',
): (result: string, detail: Record<string, unknown>) => RunRecord {
  return (result, detail) => ({
    runId,
    kind,
    result,
    startedAt: new Date(startedMs).toISOString(),
    finishedAt: new Date().toISOString(),
    durationMs: Date.now() - startedMs,
    detail,
    ...(traceId !== '' ? { traceId } : {}),
  });
}

/** Counts of a run's detail that its root span carries, by attribute name. */
const SPAN_COUNTS = {
  failed: 'scimsync.failed',
  eventsRead: 'scimsync.events_read',
  duplicatesSkipped: 'scimsync.duplicates_skipped',
} as const;

/** A tenant run job's root span attributes: the tenant, what triggered the run, and which attempt this is. */
export function runJobSpanAttributes(job: {
  data: { tenant: string; trigger: string };
  attemptsMade: number;
}): Record<string, string | number> {
  return { 'scimsync.tenant': job.data.tenant, 'scimsync.trigger': job.data.trigger, 'scimsync.attempt': job.attemptsMade + 1 };
}

/** A finished run's outcome on its root span: the result and counts, nothing else of the detail. */
export function runSpanAttributes(r: RunRecord): Record<string, string | number> {
  const out: Record<string, string | number> = { 'scimsync.run_id': r.runId, 'scimsync.result': r.result };
  for (const [key, name] of Object.entries(SPAN_COUNTS)) {
    const v = r.detail[key];
    if (typeof v === 'number') out[name] = v;
  }
  const changes = (r.detail['summary'] as { changes?: unknown } | undefined)?.changes;
  if (typeof changes === 'number') out['scimsync.changes'] = changes;
  const code = r.detail['code'];
  if (typeof code === 'string') out['error.type'] = code;
  return out;
}

export interface QuarantineState {
  quarantined: boolean;
  failures: number;
  /** Epoch ms until which scheduled runs are skipped. */
  until: number;
  reason: string;
  since: number;
}

export interface HeldDeletes {
  count: number;
  reasons: string[];
  at: number;
  runId: string;
  /** Member removals held with them (an approval is bound to both counts). */
  memberRemovals?: number;
  /** User-attribute values taken away, held with them (bound likewise). */
  attributeClears?: number;
}

export class TenantState {
  readonly tenant: string;
  readonly keys: TenantKeys;
  private readonly redis: RedisClient;

  constructor(redis: RedisClient, keyPrefix: string, tenant: string) {
    this.redis = redis;
    this.tenant = tenant;
    this.keys = tenantKeys(keyPrefix, tenant);
  }

  /**
   * Take the run lease with a new fencing token (see lease.ts); undefined if another owner
   * holds it. `owner` (e.g. the job id) lets a job recovered after its replica stalled or died
   * take its own lease over: the new token fences the earlier holder out.
   */
  acquireLease(kind: LeaseKind, owner: string, ttlMs: number): Promise<RunLease | undefined> {
    return acquireRunLease(this.redis, this.keys.lease(kind), this.keys.fence(kind), owner, ttlMs);
  }

  async quarantine(): Promise<QuarantineState> {
    const h = await this.redis.hgetall(this.keys.quarantine);
    const until = Number(h['until'] ?? 0);
    return {
      quarantined: until > 0,
      failures: Number(h['failures'] ?? 0),
      until,
      reason: h['reason'] ?? '',
      since: Number(h['since'] ?? 0),
    };
  }

  /**
   * Count a failed run; after `maxConsecutiveFailures` the tenant is quarantined with an
   * exponential backoff (base × 2^(n − max)), capped at maxBackoffHours.
   */
  async recordFailure(reason: string, cfg: DaemonConfig['quarantine'], now = Date.now()): Promise<QuarantineState> {
    const failures = await this.redis.hincrby(this.keys.quarantine, 'failures', 1);
    if (failures >= cfg.maxConsecutiveFailures) {
      const exp = failures - cfg.maxConsecutiveFailures;
      const backoff = Math.min(cfg.baseBackoffMinutes * 60_000 * 2 ** exp, cfg.maxBackoffHours * 3_600_000);
      const prev = await this.quarantine();
      await this.redis.hset(this.keys.quarantine, { until: String(now + backoff), reason, since: String(prev.since || now) });
    }
    return this.quarantine();
  }

  /** A successful run (or an operator's `resume`) ends the quarantine and resets the failure count. */
  async clearQuarantine(): Promise<void> {
    await this.redis.del(this.keys.quarantine);
  }

  async setHeldDeletes(held: HeldDeletes | undefined): Promise<void> {
    if (held === undefined) {
      await this.redis.del(this.keys.heldDeletes);
      return;
    }
    await this.redis.hset(this.keys.heldDeletes, {
      count: String(held.count),
      reasons: JSON.stringify(held.reasons),
      at: String(held.at),
      runId: held.runId,
      memberRemovals: String(held.memberRemovals ?? 0),
      attributeClears: String(held.attributeClears ?? 0),
    });
  }

  async heldDeletes(): Promise<HeldDeletes | undefined> {
    const h = await this.redis.hgetall(this.keys.heldDeletes);
    if (!h['count']) return undefined;
    return {
      count: Number(h['count']),
      reasons: JSON.parse(h['reasons'] ?? '[]') as string[],
      at: Number(h['at'] ?? 0),
      runId: h['runId'] ?? '',
      memberRemovals: Number(h['memberRemovals'] ?? 0),
      attributeClears: Number(h['attributeClears'] ?? 0),
    };
  }

  /**
   * `approve-deletes`: the next reconcile of this tenant runs with the guard overridden (valid
   * for a day), bound to what is held now: a plan removing more trips the guard again.
   * Returns what was approved, or undefined when nothing is held.
   */
  async approveHeld(by: string): Promise<HeldDeletes | undefined> {
    const held = await this.heldDeletes();
    if (!held) return undefined;
    const bound: DeleteApproval = {
      destructive: held.count,
      memberRemovals: held.memberRemovals ?? 0,
      ...(held.attributeClears ? { attributeClears: held.attributeClears } : {}),
    }; // take-aways bound too
    await this.redis.set(this.keys.approval, JSON.stringify({ by, at: Date.now(), ...bound }), 'EX', 86_400);
    return held;
  }

  /** The approval's bound (what was held when it was given); an approval without counts covers nothing. */
  async approval(): Promise<DeleteApproval | undefined> {
    const v = await this.redis.get(this.keys.approval);
    if (v === null) return undefined;
    const a = JSON.parse(v) as Partial<DeleteApproval>;
    // attributeClears only when the approval bound them (absent: none approved).
    return {
      destructive: Number(a.destructive ?? 0),
      memberRemovals: Number(a.memberRemovals ?? 0),
      ...(a.attributeClears !== undefined ? { attributeClears: Number(a.attributeClears) } : {}),
    };
  }

  /** Consumes the approval (one run only). */
  async takeApproval(): Promise<boolean> {
    const v = await this.redis.getdel(this.keys.approval);
    return v !== null;
  }

  async hasApproval(): Promise<boolean> {
    return (await this.redis.exists(this.keys.approval)) === 1;
  }

  async pushHistory(record: RunRecord, keep: number): Promise<void> {
    const key = this.keys.history(record.kind);
    await this.redis
      .multi()
      .lpush(key, JSON.stringify(record))
      .ltrim(key, 0, keep - 1)
      .exec();
  }

  async history(kind: 'reconcile' | 'audit', n = 10): Promise<RunRecord[]> {
    const list = await this.redis.lrange(this.keys.history(kind), 0, n - 1);
    return list.map((s) => JSON.parse(s) as RunRecord);
  }
}
