/**
 * Fanned-out apply: a phase's tasks are stored in Redis in chunks; each chunk is a child job
 * of a per-phase barrier (a BullMQ flow) that any replica may process. Job data carries only
 * ids (tenant, run, phase, chunk index, fencing token, the W3C trace context of the phase's
 * span when tracing is on), never personal data or secrets. A chunk's span continues the
 * run's trace under its phase, on whichever replica runs it.
 * Completed tasks are marked, so a chunk retried after a crash skips what it already did.
 *
 * Before each task a chunk checks that the run's lease still carries the chunk's fencing
 * token and that it still holds its own job lock: a chunk of a run that lost its lease, or
 * a chunk another replica recovered while this one stalled, stops without writing. At
 * shutdown (the daemon's bound elapsed) a chunk stops between tasks and records nothing for
 * the task in flight: the chunk is recovered as stalled and finished elsewhere.
 */
import { type FlowProducer, UnrecoverableError, type Job, type Queue, type QueueEvents } from 'bullmq';
import { ErrorCodes, isSyncError, SyncError } from '../errors.ts';
import type { Logger } from '../observability/logger.ts';
import { recordChange } from '../observability/instrument.ts';
import { executeTask, isPartialTaskError, type ApplyTask, type Phase } from '../reconcile/tasks.ts';
import { readBeforeWrite } from '../reconcile/read-before-write.ts';
import type { ApplyFailure } from '../reconcile/apply.ts';
import { QUEUE_NAMES, tenantKeys } from './keys.ts';
import { checkFence, leaseLostError } from './lease.ts';
import { DaemonProvisioningLog } from '../provisioning-log/daemon.ts';
import type { RedisClient } from './redis.ts';
import type { TenantRuntime } from './tenant-runtime.ts';
import { contextFromCarrier, traceCarrier, withSpan } from '../observability/tracing/spans.ts';

export interface ChunkJobData {
  tenant: string;
  runId: string;
  phase: string;
  index: number;
  /** Fencing token of the run's lease: the chunk writes only while the lease carries it. */
  fence: number;
  /** W3C trace context (`traceparent`) of the phase's span; absent when tracing is off. */
  trace?: Record<string, string>;
}

export interface BarrierJobData {
  tenant: string;
  runId: string;
  phase: string;
  chunks: number;
}

export const RUN_TTL_SECONDS = 86_400;

/** Stores the phase's chunks and enqueues the flow; resolves when every chunk has finished. */
export interface FanOutDeps {
  redis: RedisClient;
  keyPrefix: string;
  flow: FlowProducer;
  events: QueueEvents;
  /** The apply queue: polled for the barrier, so a vanished flow ends the wait. */
  queue: Queue;
  chunkSize: number;
  attempts: number;
  /** Upper bound of one phase (a backstop: vanished jobs are noticed within `pollMs`). */
  timeoutMs: number;
  pollMs: number;
  fence: number;
  signal?: AbortSignal;
}

export async function runPhaseFannedOut(deps: FanOutDeps, tenant: string, runId: string, phase: Phase): Promise<void> {
  if (phase.tasks.length === 0) return;
  const attrs = { 'scimsync.tenant': tenant, 'scimsync.phase': phase.name, 'scimsync.tasks': phase.tasks.length };
  return withSpan('reconcile apply phase', attrs, async (span) => {
    span.set({ 'scimsync.chunks': Math.ceil(phase.tasks.length / deps.chunkSize) });
    await fanOutPhase(deps, tenant, runId, phase);
  });
}

async function fanOutPhase(deps: FanOutDeps, tenant: string, runId: string, phase: Phase): Promise<void> {
  const keys = tenantKeys(deps.keyPrefix, tenant);
  const chunks: ApplyTask[][] = [];
  for (let i = 0; i < phase.tasks.length; i += deps.chunkSize) chunks.push(phase.tasks.slice(i, i + deps.chunkSize));
  const trace = traceCarrier();
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
      data: { tenant, runId, phase: phase.name, index, fence: deps.fence, ...(trace ? { trace } : {}) } satisfies ChunkJobData,
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
  const barrierId = node.job.id ?? `${tenant}.${runId}.${phase.name}.barrier`;
  // Polled as well as awaited: a flow wiped from Redis (restarted without persistence,
  // evicted, deleted) sends no event, and the wait would otherwise last until the timeout.
  const probe = async (): Promise<'done' | Error | undefined> => {
    const state = await deps.queue.getJobState(barrierId);
    if (state === 'completed') return 'done';
    if (state !== 'unknown') return undefined;
    return new SyncError(
      ErrorCodes.JOBS_VANISHED,
      'transient',
      `the apply jobs of phase ${phase.name} (run ${runId}) are gone from Redis: Redis restarted without persistence, evicted them (maxmemory-policy is not noeviction) or they were deleted; this run stops, the next run plans again`,
    );
  };
  await untilFinished(node.job.waitUntilFinished(deps.events), probe, deps.pollMs, deps.timeoutMs, deps.signal);
}

/**
 * Bounds, polls and aborts the wait for a phase. BullMQ's own `ttl` timer is not cleared when
 * the wait is abandoned, and would hold the process open for hours after a shutdown. When the
 * run lost its lease, one last probe says whether its jobs vanished (the clearer error when
 * Redis lost its data: the lease went with them).
 */
function untilFinished(
  wait: Promise<unknown>,
  probe: () => Promise<'done' | Error | undefined>,
  pollMs: number,
  timeoutMs: number,
  signal: AbortSignal | undefined,
): Promise<void> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const timer = setTimeout(() => settle(new Error(`fanned-out phase did not finish within ${timeoutMs} ms`)), timeoutMs);
    const poll = setInterval(() => {
      probe().then(
        (r) => r !== undefined && settle(r === 'done' ? undefined : r),
        () => undefined,
      );
    }, pollMs);
    const onAbort = (): void => {
      const reason: unknown = signal?.reason ?? new Error('aborted');
      if (!isSyncError(reason) || reason.code !== ErrorCodes.LEASE_LOST) return settle(reason);
      const last = new Promise<'done' | Error | undefined>((r) => setTimeout(() => r(undefined), 2_000).unref());
      Promise.race([probe(), last]).then(
        (r) => settle(r instanceof Error ? r : reason),
        () => settle(reason),
      );
    };
    const settle = (err?: unknown): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearInterval(poll);
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

export interface ChunkDeps {
  redis: RedisClient;
  keyPrefix: string;
  tenants: Map<string, TenantRuntime>;
  logger: Logger;
  /** The apply worker's lockDuration: the chunk's lock is checked and extended before each task. */
  lockMs: number;
  /** Aborted when the daemon's shutdown bound has elapsed: the chunk stops between tasks. */
  signal?: AbortSignal;
}

/** Processor of one chunk job (runs on any replica); `token` is the worker's lock token of this job. */
export function processChunk(
  job: Job<ChunkJobData>,
  token: string | undefined,
  deps: ChunkDeps,
): Promise<{ done: number; failed: number }> {
  const { tenant, phase, index } = job.data;
  const attrs = { 'scimsync.tenant': tenant, 'scimsync.phase': phase, 'scimsync.chunk': index, 'scimsync.attempt': job.attemptsMade + 1 };
  const parent = contextFromCarrier(job.data.trace);
  return withSpan(
    'reconcile apply chunk',
    attrs,
    async (span) => {
      const r = await applyChunk(job, token, deps);
      span.set({ 'scimsync.done': r.done, 'scimsync.failed': r.failed });
      return r;
    },
    parent ? { parent } : {},
  );
}

async function applyChunk(job: Job<ChunkJobData>, token: string | undefined, deps: ChunkDeps): Promise<{ done: number; failed: number }> {
  const { tenant, runId, phase, index, fence } = job.data;
  const rt = deps.tenants.get(tenant);
  if (!rt) throw new Error(`tenant ${tenant} is not configured in this replica`);
  const keys = tenantKeys(deps.keyPrefix, tenant);
  const raw = await deps.redis.get(keys.chunk(runId, phase, index));
  if (raw === null) throw new Error(`chunk ${phase}#${index} of run ${runId} has expired`);
  const tasks = JSON.parse(raw) as ApplyTask[];
  const resultKey = keys.runResult(runId);
  const logger = deps.logger.child({ tenant, runId });
  const provisioningLog = new DaemonProvisioningLog(deps.redis, deps.keyPrefix, rt);
  const stopped = (): boolean => deps.signal?.aborted === true;
  /** Why this chunk may not write any more, if so (checked before each task). */
  const fencedOut = async (): Promise<SyncError | undefined> => {
    const [state, lock] = await Promise.all([
      checkFence(deps.redis, keys.lease('reconcile'), fence),
      token === undefined ? 1 : job.extendLock(token, deps.lockMs),
    ]);
    if (state !== 'held') return leaseLostError(state, fence);
    if (Number(lock) !== 1)
      return new SyncError(
        ErrorCodes.LEASE_LOST,
        'transient',
        `chunk ${phase}#${index} of run ${runId} was taken over by another replica (its job lock expired while this replica stalled); this replica stops it`,
      );
    return undefined;
  };
  // A repeated attempt (retried, or recovered after a stall) may meet tasks whose first run
  // reached the platform but whose completion mark was never written: it reads each object
  // before writing it, so nothing is applied twice.
  const repeated = job.attemptsStarted > 1 || job.attemptsMade > 0;
  const target = repeated
    ? readBeforeWrite(rt.scim, {
        onSkipped: (write, type, id) =>
          logger.info({ phase, chunk: index, write, type, id }, 'write already applied by an earlier attempt; not repeated'),
      })
    : rt.scim;
  let done = 0;
  let failed = 0;
  for (const [i, task] of tasks.entries()) {
    if (stopped()) return abandon(tasks.length - i);
    const marker = `done:${phase}:${index}:${i}`;
    if ((await deps.redis.hexists(resultKey, marker)) === 1) continue;
    const lost = await fencedOut();
    if (lost) {
      logger.warn({ code: lost.code, phase, chunk: index, left: tasks.length - i }, lost.message);
      throw new UnrecoverableError(`${lost.code}: ${lost.message}`);
    }
    let change: Awaited<ReturnType<typeof executeTask>>;
    try {
      change = await executeTask(task, {
        target,
        ledger: rt.ledger,
        now: Date.now,
        adoptExisting: rt.loaded.config.provisioning?.matching.adoptExisting ?? false,
        attributes: rt.attributes,
      });
    } catch (e) {
      // Cut off by the shutdown (closed connections): not a failure of the task. It stays
      // undone and is applied by whoever recovers the chunk.
      if (stopped()) return abandon(tasks.length - i);
      const code = isSyncError(e) ? e.code : 'E_UNEXPECTED';
      const message = e instanceof Error ? e.message : String(e);
      recordChange(tenant, { action: task.action, result: 'failed', externalId: task.externalId, name: task.name, code, message }, logger);
      await provisioningLog.change(
        runId,
        task,
        { action: task.action, result: 'failed', externalId: task.externalId, name: task.name, code, message },
        logger,
      );
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
      continue;
    }
    // Outside the try: the task reached the platform. A Redis error from here on fails this
    // attempt (the task is not reported as failed); the retry reads before it writes.
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
  }
  return { done, failed };

  function abandon(left: number): never {
    logger.warn(
      { phase, chunk: index, left },
      'shutdown: apply chunk stopped between tasks; the rest is applied when the chunk is recovered',
    );
    throw deps.signal?.reason instanceof Error ? deps.signal.reason : new Error('shutdown');
  }
}
