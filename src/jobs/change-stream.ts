/**
 * The change stream of one tenant in the daemon: one replica at a time runs it (a lease of its
 * own, renewed; another replica takes it over once the holder stops or dies), asking the
 * tenant's source for changes at the mechanism's interval (reconcile/changes/change-loop.ts).
 *
 * Each batch writes under the tenant's reconcile lease with its own fencing token, through the
 * same fanned-out apply as a full reconcile (every chunk checks the token before each task),
 * with the same rate limit and provisioning log: a batch and a full reconcile never write at
 * once, and a batch waits (the next poll asks again) while a full reconcile runs. A quarantined
 * tenant gets no batches. What the stream leaves to a full reconcile is queued as one.
 */
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { FlowProducer, Queue, QueueEvents } from 'bullmq';
import type { Logger } from '../observability/logger.ts';
import { sleep } from '../platform/retry.ts';
import { ChangeLoop, type AppliedBatch, type BatchResult, type ChangeWriter } from '../reconcile/changes/change-loop.ts';
import { changeMetrics } from '../reconcile/changes/metrics.ts';
import type { Ledger } from '../reconcile/ledger.ts';
import type { Plan } from '../reconcile/plan-types.ts';
import { supportsChanges, type ChangeSource } from '../sources/changes.ts';
import { createSource, sourceContext } from '../sources/registry.ts';
import { DaemonProvisioningLog } from '../provisioning-log/daemon.ts';
import { RedisBurstStore, RedisChangeState } from './change-state.ts';
import type { RunLease } from './lease.ts';
import { collectRunResult, runPhases, writeAheadLedger } from './reconcile-job.ts';
import type { RedisClient } from './redis.ts';
import { triggerRun } from './schedulers.ts';
import type { TenantRuntime } from './tenant-runtime.ts';
import { withSpan, type SpanHandle } from '../observability/tracing/spans.ts';

export interface ChangeStreamDeps {
  rt: TenantRuntime;
  source: ChangeSource;
  redis: RedisClient;
  keyPrefix: string;
  flow: FlowProducer;
  applyEvents: QueueEvents;
  applyQueue: Queue;
  reconcileQueue: Queue;
  logger: Logger;
}

/** This replica's name as the owner of change-stream leases. */
export const replicaOwner = (): string => `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;

export class ChangeStream {
  private readonly deps: ChangeStreamDeps;
  private readonly owner: string;
  private readonly stopping = new AbortController();
  private readonly state: RedisChangeState;
  private done: Promise<void> | undefined;
  private lagTimer: NodeJS.Timeout | undefined;
  private lastProgressAt = Date.now();

  constructor(deps: ChangeStreamDeps, owner: string) {
    this.deps = deps;
    this.owner = owner;
    this.state = new RedisChangeState(deps.redis, deps.keyPrefix, deps.rt.id);
  }

  start(): void {
    const tenant = this.deps.rt.id;
    changeMetrics.streamRunning.set({ tenant }, 0);
    this.lagTimer = setInterval(() => void this.refreshGauges(), 5_000);
    this.lagTimer.unref();
    this.done = this.run().catch((e: unknown) =>
      this.deps.logger.error({ tenant, err: (e as Error).message }, 'change stream stopped on an unexpected error'),
    );
  }

  async stop(): Promise<void> {
    this.stopping.abort(new Error('shutdown'));
    clearInterval(this.lagTimer);
    await this.done;
    await this.deps.source.close?.().catch(() => undefined);
  }

  private running = false;

  /** Lag and cursor age, exported by the replica that runs the stream only (summing replicas stays meaningful). */
  private async refreshGauges(): Promise<void> {
    const tenant = this.deps.rt.id;
    if (!this.running) {
      changeMetrics.cursorAge.remove({ tenant });
      changeMetrics.streamLag.remove({ tenant });
      return;
    }
    const s = await this.state.read().catch(() => undefined);
    if (s?.cursorSavedAt !== undefined) changeMetrics.cursorAge.set({ tenant }, (Date.now() - s.cursorSavedAt) / 1000);
    if (s?.lastPollAt !== undefined)
      changeMetrics.streamLag.set({ tenant }, (Date.now() - Math.max(s.lastPollAt, this.lastProgressAt)) / 1000);
  }

  private async run(): Promise<void> {
    const { rt, logger: base } = this.deps;
    const logger = base.child({ tenant: rt.id });
    const ttl = rt.loaded.config.daemon.jobLockSeconds * 1000;
    const stop = this.stopping.signal;
    while (!stop.aborted) {
      const lease = await rt.state.acquireLease('changes', this.owner, ttl).catch(() => undefined);
      if (!lease) {
        await sleep(Math.max(250, ttl / 3), stop).catch(() => undefined);
        continue;
      }
      const mechanism = this.deps.source.changeMechanism();
      await this.state.note({ owner: this.owner, mechanism: mechanism?.name ?? '' }).catch(() => undefined);
      changeMetrics.streamRunning.set({ tenant: rt.id }, 1);
      this.running = true;
      logger.info({ mechanism: mechanism?.name, owner: this.owner }, 'change stream running on this replica');
      try {
        await this.runWhileHeld(lease, logger);
      } finally {
        changeMetrics.streamRunning.set({ tenant: rt.id }, 0);
        this.running = false;
        await lease.release().catch(() => undefined);
      }
      if (lease.signal.aborted && !stop.aborted) logger.warn('change stream lease lost: another replica runs the stream now');
    }
  }

  private async runWhileHeld(lease: RunLease, logger: Logger): Promise<void> {
    const { rt } = this.deps;
    const cfg = rt.loaded.config;
    const signal = AbortSignal.any([this.stopping.signal, lease.signal]);
    const loop = new ChangeLoop({
      tenant: rt.id,
      source: this.deps.source,
      config: cfg.provisioning!,
      target: rt.scim.readOnly(),
      attributes: rt.attributes?.readOnly(),
      ledgerStore: rt.ledger,
      cursor: this.state,
      burst: new RedisBurstStore(this.deps.redis, this.deps.keyPrefix, rt.id),
      writer: this.writer(signal, logger),
      requestFull: async (code, detail) => {
        const id = await triggerRun(this.deps.reconcileQueue, 'reconcile', rt.id, cfg.daemon.jobAttempts, 'changes');
        logger.info({ code, detail, jobId: id }, 'change stream: full reconcile requested');
        await this.state.note({ lastDeferCode: code, lastDeferAt: Date.now() });
      },
      logger,
    });
    while (!signal.aborted) {
      let result: BatchResult | undefined;
      let failed = false;
      try {
        result = await loop.pollOnce(signal);
        this.lastProgressAt = Date.now();
        await this.state.note({
          lastPollAt: Date.now(),
          lastResult: result.kind,
          ...(result.kind !== 'idle' && result.kind !== 'busy' ? { lastBatchAt: Date.now() } : {}),
        });
      } catch (e) {
        if (signal.aborted) break;
        const message = e instanceof Error ? e.message : String(e);
        logger.warn({ err: message }, 'change stream: this round failed; the next one asks again from the same cursor');
        await this.state.note({ lastPollAt: Date.now(), lastResult: 'failed', lastError: message }).catch(() => undefined);
        failed = true;
      }
      await sleep(loop.untilNextPoll(failed), signal).catch(() => undefined);
    }
  }

  /** Batches write under the tenant's reconcile lease, like a full reconcile, through its fanned-out apply. */
  private writer(streamSignal: AbortSignal, logger: Logger): ChangeWriter {
    const { rt } = this.deps;
    const cfg = rt.loaded.config.daemon;
    const lockMs = cfg.jobLockSeconds * 1000;
    let current: RunLease | undefined;
    let batchSpan: SpanHandle | undefined;
    return {
      // Each batch is the root of its own trace: its targeted plan, apply phases and chunk jobs.
      exclusive: (work) =>
        withSpan(
          'change batch',
          { 'scimsync.tenant': rt.id },
          async (span) => {
            const q = await rt.state.quarantine();
            if (q.quarantined && Date.now() < q.until) return outcome(span, 'quarantined');
            const lease = await rt.state.acquireLease('reconcile', `changes:${this.owner}`, lockMs);
            if (!lease) return outcome(span, 'busy');
            current = lease;
            batchSpan = span;
            try {
              const r = await work({ signal: AbortSignal.any([streamSignal, lease.signal]), assertHeld: () => lease.assertHeld() });
              span.set({ 'scimsync.result': (r as { kind?: unknown }).kind === 'defer' ? 'deferred' : 'applied' });
              return r;
            } finally {
              current = undefined;
              batchSpan = undefined;
              await lease.release().catch(() => undefined);
            }
          },
          { root: true },
        ),
      apply: async (plan: Plan, ledger: Ledger, scope, runId): Promise<AppliedBatch> => {
        const lease = current;
        if (!lease) throw new Error('a change batch applies only under the reconcile lease');
        const log = new DaemonProvisioningLog(this.deps.redis, this.deps.keyPrefix, rt);
        await log.planned(runId, plan, logger);
        await writeAheadLedger(rt, plan, ledger);
        const fanOut = {
          redis: this.deps.redis,
          keyPrefix: this.deps.keyPrefix,
          flow: this.deps.flow,
          events: this.deps.applyEvents,
          queue: this.deps.applyQueue,
          chunkSize: cfg.applyChunkSize,
          attempts: cfg.jobAttempts,
          timeoutMs: 3_600_000,
          pollMs: Math.min(5_000, Math.max(250, lockMs / 4)),
          fence: lease.fence,
          signal: scope.signal,
        };
        await runPhases(fanOut, rt.id, runId, plan, lease);
        await lease.assertHeld();
        const summary = await collectRunResult(this.deps.redis, this.deps.keyPrefix, rt.id, runId);
        await log.deliver(logger, scope.signal);
        const writes = Object.values(summary.succeeded).reduce((a, b) => a + b, 0);
        batchSpan?.set({ 'scimsync.run_id': runId, 'scimsync.writes': writes, 'scimsync.failed': summary.failed.length });
        return { writes, failed: summary.failed.length };
      },
    };
  }
}

/** A batch that did not run (the tenant quarantined, a reconcile holding the lease), on its span. */
function outcome<T extends 'busy' | 'quarantined'>(span: SpanHandle, result: T): T {
  span.set({ 'scimsync.result': result });
  return result;
}

/**
 * The change-capable source of every tenant whose provisioning.changes is on (a source that
 * cannot report changes, as configured, is closed again: its tenant keeps the full reconcile).
 */
export async function openChangeSources(tenants: Map<string, TenantRuntime>, logger: Logger): Promise<Map<string, ChangeSource>> {
  const out = new Map<string, ChangeSource>();
  for (const rt of tenants.values()) {
    const p = rt.loaded.config.provisioning;
    if (!p?.changes.enabled) continue;
    const log = logger.child({ tenant: rt.id });
    try {
      const source = await createSource(p.source, sourceContext(rt.loaded, log));
      if (supportsChanges(source)) out.set(rt.id, source);
      else await source.close?.();
    } catch (e) {
      // The full reconcile reports a source that cannot be set up; the tenant runs without a stream.
      log.warn({ err: e instanceof Error ? e.message : String(e) }, 'change stream not started: the source could not be set up');
    }
  }
  return out;
}
