/**
 * The daemon's side of the provisioning log. The reconcile job calls `planned` (the plan's
 * before values and removal reasons go to a short-lived hash, since apply chunks carry tasks
 * only; held removals become records) and `deliver` at the end of the run (under the tenant's
 * reconcile lease, so one replica at a time moves the sink position); each apply chunk calls
 * `change` per task. Failures to log are logged and never fail the provisioning itself.
 */
import { createHash } from 'node:crypto';
import { createSink } from '../audit/sinks/registry.ts';
import { RedisDeadLetterStore } from '../audit/dead-letter/redis-store.ts';
import type { LoadedConfig } from '../config/load.ts';
import type { Logger } from '../observability/logger.ts';
import type { Plan } from '../reconcile/plan-types.ts';
import type { AppliedChange, ApplyTask, ChangeAction } from '../reconcile/tasks.ts';
import type { RedisClient } from '../jobs/redis.ts';
import { retentionOf } from './config-schema.ts';
import { conflictRecords } from './identity.ts';
import { heldRecords, planDetails, plannedActions, recordOf, taskKey, type NewRecord, type TaskDetail } from './record.ts';
import { provisioningLogKeys, RedisProvisioningLogStore } from './redis-store.ts';
import { deliverRecords, type DeliveryResult } from './sink-delivery.ts';

/** What identifies a held change: the same set held again is not recorded again. */
const heldKey = (r: NewRecord): string => `${r.action}|${r.object.externalId ?? ''}|${r.members?.removed.join(',') ?? ''}`;

const HAS_DETAILS = new Set<ChangeAction>([
  'user.update',
  'user.adopt',
  'user.reactivate',
  'user.deactivate',
  'user.delete',
  'group.update',
  'group.adopt',
  'user.attributes',
  'attribute.create',
  'attribute.update',
]); // attribute actions

/** Lifetime of a run's details hash: as long as its apply chunks may run. */
const DETAILS_TTL_SECONDS = 86_400;

const errText = (e: unknown): string => (e instanceof Error ? e.message : String(e));

export class DaemonProvisioningLog {
  readonly store: RedisProvisioningLogStore;
  private readonly keys: ReturnType<typeof provisioningLogKeys>;
  private readonly redis: RedisClient;
  private readonly keyPrefix: string;
  private readonly tenant: { id: string; loaded: Pick<LoadedConfig, 'config' | 'configDir'> };

  constructor(redis: RedisClient, keyPrefix: string, tenant: { id: string; loaded: Pick<LoadedConfig, 'config' | 'configDir'> }) {
    this.redis = redis;
    this.keyPrefix = keyPrefix;
    this.tenant = tenant;
    this.keys = provisioningLogKeys(keyPrefix, tenant.id);
    this.store = new RedisProvisioningLogStore(redis, keyPrefix, tenant.id, retentionOf(tenant.loaded.config.provisioningLog));
  }

  async planned(runId: string, plan: Plan, logger: Logger): Promise<void> {
    try {
      const details = planDetails(plan);
      if (details.size > 0) {
        const key = this.keys.details(runId);
        const fields: string[] = [];
        for (const [k, d] of details) fields.push(k, JSON.stringify(d));
        await this.redis
          .multi()
          .hset(key, ...fields)
          .expire(key, DETAILS_TTL_SECONDS)
          .exec();
      }
      // A tripped guard holds the same removals run after run until someone decides: record
      // them when the held set changes, not every scheduled run (they would flood the log).
      // Identity conflicts also last until someone acts: recorded the same way.
      const held = [...heldRecords(this.tenant.id, runId, plan, Date.now()), ...conflictRecords(this.tenant.id, runId, plan, Date.now())];
      const digest = held.length === 0 ? '-' : createHash('sha256').update(held.map(heldKey).sort().join('\n')).digest('hex');
      const previous = await this.redis.set(this.keys.heldDigest, digest, 'GET');
      if (previous !== digest) await this.store.append(held);
    } catch (e) {
      logger.warn({ err: errText(e), runId }, 'provisioning log: plan details not recorded');
    }
  }

  async change(runId: string, task: ApplyTask, change: AppliedChange, logger: Logger): Promise<void> {
    try {
      // Only updates and removals have details in the plan; creates and memberships carry theirs.
      const fields = plannedActions(change.action)
        .filter((a) => HAS_DETAILS.has(a))
        .map((a) => taskKey(a, change.externalId ?? task.externalId));
      const raw = fields.length > 0 ? await this.redis.hmget(this.keys.details(runId), ...fields) : [];
      const found = raw.find((v) => v !== null);
      const detail = found ? (JSON.parse(found) as TaskDetail) : undefined;
      const full = { ...change, externalId: change.externalId ?? task.externalId, name: change.name ?? task.name };
      await this.store.append([recordOf(this.tenant.id, runId, full, task, detail, Date.now())]);
    } catch (e) {
      logger.warn({ err: errText(e), runId, action: change.action }, 'provisioning log: record not written');
    }
  }

  /** Delivers new records to the audit sinks when `provisioningLog.deliverToSinks` is on; a failure is logged and retried next run. */
  async deliver(logger: Logger, signal?: AbortSignal): Promise<DeliveryResult | undefined> {
    const cfg = this.tenant.loaded.config;
    if (!cfg.provisioningLog.deliverToSinks || !cfg.audit) return undefined;
    const sinks = cfg.audit.sinks.map((s) => createSink(s, { configDir: this.tenant.loaded.configDir, logger }));
    try {
      const res = await deliverRecords({
        store: this.store,
        sinks,
        deadLetters: new RedisDeadLetterStore(this.redis, this.keyPrefix, this.tenant.id),
        fieldStyle: cfg.audit.fieldStyle,
        batchSize: cfg.audit.batchSize,
        ...(signal ? { signal } : {}),
      });
      if (res.delivered > 0)
        logger.info(
          { delivered: res.delivered, deadLettered: res.deadLettered, upTo: res.upTo },
          'provisioning log delivered to the audit sinks',
        );
      return res;
    } catch (e) {
      logger.warn({ err: errText(e) }, 'provisioning log: delivery to the audit sinks failed; the next run retries from the same record');
      return undefined;
    }
  }
}
