/**
 * Fanned-out apply: a phase's tasks are stored in Redis in chunks; each chunk is a child job
 * of a per-phase barrier (a BullMQ flow) that any replica may process. Job data carries only
 * ids (tenant, run, phase, chunk index), never personal data or secrets. Completed tasks are
 * marked, so a chunk retried after a crash skips what it already did: nothing is applied twice.
 */
import { FlowProducer, type Job, type QueueEvents } from 'bullmq';
import { isSyncError } from '../platform/errors.ts';
import type { Logger } from '../observability/logger.ts';
import { recordChange } from '../observability/instrument.ts';
import { executeTask, isPartialTaskError, type ApplyTask, type Phase } from '../reconcile/tasks.ts';
import type { ApplyFailure } from '../reconcile/apply.ts';
import { QUEUE_NAMES, tenantKeys } from './keys.ts';
import { DaemonProvisioningLog } from '../provisioning-log/daemon.ts';
import type { RedisClient } from './redis.ts';
import type { TenantRuntime } from './tenant-runtime.ts';

export interface ChunkJobData {
  tenant: string;
  runId: string;
  phase: string;
  index: number;
}

export interface BarrierJobData {
  tenant: string;
  runId: string;
  phase: string;
  chunks: number;
}

export const RUN_TTL_SECONDS = 86_400;

/** Stores the phase's chunks and enqueues the flow; resolves when every chunk has finished. */
export async function runPhaseFannedOut(
  deps: { redis: RedisClient; keyPrefix: string; flow: FlowProducer; events: QueueEvents; bullPrefix: string; chunkSize: number; attempts: number; timeoutMs: number; signal?: AbortSignal },
  tenant: string,
  runId: string,
  phase: Phase,
): Promise<void> {
  if (phase.tasks.length === 0) return;
  const keys = tenantKeys(deps.keyPrefix, tenant);
  const chunks: ApplyTask[][] = [];
  for (let i = 0; i < phase.tasks.length; i += deps.chunkSize) chunks.push(phase.tasks.slice(i, i + deps.chunkSize));
  const tx = deps.redis.multi();
  chunks.forEach((c, i) => tx.set(keys.chunk(runId, phase.name, i), JSON.stringify(c), 'EX', RUN_TTL_SECONDS));
  await tx.exec();
  const node = await deps.flow.add({
    name: 'barrier',
    queueName: QUEUE_NAMES.apply,
    data: { tenant, runId, phase: phase.name, chunks: chunks.length } satisfies BarrierJobData,
    opts: { jobId: `${tenant}.${runId}.${phase.name}.barrier`, removeOnComplete: { age: 3600 }, removeOnFail: { age: 86_400 } },
    children: chunks.map((_, index) => ({
      name: 'chunk',
      queueName: QUEUE_NAMES.apply,
      data: { tenant, runId, phase: phase.name, index } satisfies ChunkJobData,
      opts: {
        jobId: `${tenant}.${runId}.${phase.name}.${index}`,
        attempts: deps.attempts,
        backoff: { type: 'exponential', delay: 1_000 },
        // A chunk that failed for good must not block the phase: its tasks are reported as failed.
        ignoreDependencyOnFailure: true,
        removeOnComplete: { age: 3600 },
        removeOnFail: { age: 86_400 },
      },
    })),
  });
  await untilFinished(node.job.waitUntilFinished(deps.events), deps.timeoutMs, deps.signal);
}

/**
 * Bounds and aborts the wait for a phase. BullMQ's own `ttl` timer is not cleared when the
 * wait is abandoned, and would hold the process open for hours after a shutdown.
 */
function untilFinished(wait: Promise<unknown>, timeoutMs: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => settle(new Error(`fanned-out phase did not finish within ${timeoutMs} ms`)), timeoutMs);
    const onAbort = (): void => settle(signal?.reason ?? new Error('aborted'));
    const settle = (err?: unknown): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      if (err === undefined) resolve();
      else reject(err instanceof Error ? err : new Error(String(err)));
    };
    if (signal?.aborted) return onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    wait.then(
      () => settle(),
      (e: unknown) => settle(e ?? new Error('fanned-out phase failed')),
    );
  });
}

/** Processor of one chunk job (runs on any replica). */
export async function processChunk(job: Job<ChunkJobData>, deps: { redis: RedisClient; keyPrefix: string; tenants: Map<string, TenantRuntime>; logger: Logger }): Promise<{ done: number; failed: number }> {
  const { tenant, runId, phase, index } = job.data;
  const rt = deps.tenants.get(tenant);
  if (!rt) throw new Error(`tenant ${tenant} is not configured in this replica`);
  const keys = tenantKeys(deps.keyPrefix, tenant);
  const raw = await deps.redis.get(keys.chunk(runId, phase, index));
  if (raw === null) throw new Error(`chunk ${phase}#${index} of run ${runId} has expired`);
  const tasks = JSON.parse(raw) as ApplyTask[];
  const resultKey = keys.runResult(runId);
  const logger = deps.logger.child({ tenant, runId });
  const provisioningLog = new DaemonProvisioningLog(deps.redis, deps.keyPrefix, rt);
  let done = 0;
  let failed = 0;
  for (const [i, task] of tasks.entries()) {
    const marker = `done:${phase}:${index}:${i}`;
    if ((await deps.redis.hexists(resultKey, marker)) === 1) continue;
    try {
      const change = await executeTask(task, { target: rt.scim, ledger: rt.ledger, now: Date.now, adoptExisting: rt.loaded.config.provisioning?.matching.adoptExisting ?? false, attributes: rt.attributes });
      recordChange(tenant, { ...change, result: 'ok' }, logger);
      await provisioningLog.change(runId, task, { ...change, result: 'ok' }, logger);
      await deps.redis
        .multi()
        .hset(resultKey, marker, '1')
        .hincrby(resultKey, `ok:${change.action}`, 1)
        .hincrby(resultKey, 'membersAdded', change.added ?? 0)
        .hincrby(resultKey, 'membersRemoved', change.removed ?? 0)
        .expire(resultKey, RUN_TTL_SECONDS)
        .exec();
      done++;
    } catch (e) {
      const code = isSyncError(e) ? e.code : 'E_UNEXPECTED';
      const message = e instanceof Error ? e.message : String(e);
      recordChange(tenant, { action: task.action, result: 'failed', externalId: task.externalId, name: task.name, code, message }, logger);
      await provisioningLog.change(runId, task, { action: task.action, result: 'failed', externalId: task.externalId, name: task.name, code, message }, logger);
      const failure: ApplyFailure = { action: task.action, ref: task.name, code, message };
      // Part of the task was done (a member PATCH before some members proved missing): count it.
      const partial = isPartialTaskError(e) ? e.applied : undefined;
      await deps.redis
        .multi()
        .hincrby(resultKey, 'membersAdded', partial?.added ?? 0)
        .hincrby(resultKey, 'membersRemoved', partial?.removed ?? 0)
        .hset(resultKey, marker, '1')
        .rpush(keys.runFailures(runId), JSON.stringify(failure))
        .expire(keys.runFailures(runId), RUN_TTL_SECONDS)
        .exec();
      failed++;
      // A bad credential fails every other task too: stop here; the orchestrator reports it.
      if (isSyncError(e) && e.kind === 'fatal') {
        await deps.redis.hset(resultKey, 'aborted', message);
        break;
      }
    }
  }
  return { done, failed };
}
