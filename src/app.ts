/**
 * The daemon: `buildDaemon(tenants)` wires Redis, BullMQ queues, workers and schedulers,
 * per-tenant runtimes and the observability server; `start()` and `close()` are explicit and
 * importing this module has no side effects. Several replicas can run it at once.
 */
import { FlowProducer, Queue, QueueEvents, Worker, type Job } from 'bullmq';
import type { LoadedConfig } from './config/load.ts';
import { ConfigError } from './errors.ts';
import type { Logger } from './observability/logger.ts';
import { initMetrics } from './observability/metrics.ts';
import { auditRecorder, recordJob, setDeletesHeld, setQuarantined } from './observability/instrument.ts';
import { createObservabilityServer, type ObservabilityServer } from './observability/http-server.ts';
import { QUEUE_STATES, watchQueueDepth } from './jobs/metrics.ts';
import { processChunk, type ChunkJobData } from './jobs/apply-job.ts';
import { processAudit, type AuditJobData } from './jobs/audit-job.ts';
import { AUDIT_VERIFY_JOB, processAuditVerify, type AuditVerifyJobData } from './jobs/audit-verify-job.ts';
import { processReconcile, type ReconcileJobData } from './jobs/reconcile-job.ts';
import { QUEUE_NAMES, tenantKeys } from './jobs/keys.ts';
import { checkRedisRequirements, probeSlots, redisFactory, type RedisClient } from './jobs/redis.ts';
import { listenNamingKey, untilRedisAnswers } from './jobs/daemon-start.ts';
import { errorReporter } from './jobs/error-log.ts';
import { registerSchedulers } from './jobs/schedulers.ts';
import { createTenantRuntime, type TenantRuntime } from './jobs/tenant-runtime.ts';
import { daemonStatus } from './jobs/status.ts';
import { ChangeStream, openChangeSources, replicaOwner } from './jobs/change-stream.ts';
import type { ChangeSource } from './sources/changes.ts';
import { auditStatus } from './audit/status.ts';
import { RedisAuditStateStore } from './audit/state/redis-store.ts';
import { RedisDeadLetterStore } from './audit/dead-letter/redis-store.ts';
import { daemonUiBackend } from './ui/daemon-backend.ts';
import { createStatusPageServer, type StatusPageServer } from './ui/server.ts';

export interface Daemon {
  /** `url`: metrics and probes; `uiUrl`: the status page, when enabled. */
  start(): Promise<{ url: string; uiUrl?: string }>;
  /** Stop taking jobs, let running ones finish within the bound (else abandon them to be recovered), close everything. */
  close(): Promise<void>;
  status(): Promise<unknown>;
  ready(): Promise<{ ready: boolean; checks: Record<string, boolean | string> }>;
  readonly tenants: Map<string, TenantRuntime>;
}

export interface DaemonOptions {
  logger: Logger;
  /** Override daemon.http (tests use port 0). */
  http?: { host: string; port: number };
  /** Run workers for these queues only (tests); default all. */
  workers?: Array<'reconcile' | 'audit' | 'apply'>;
  /** Runs once Redis answers, before the schedulers and workers start (the one-shot ledger import). */
  whenRedisReady?: () => Promise<void>;
}

export function buildDaemon(all: LoadedConfig[], opts: DaemonOptions): Daemon {
  const first = all[0];
  if (!first) throw new ConfigError('no tenant configured', ['tenants: add at least one tenant']);
  if (!first.config.redis)
    throw new ConfigError('the daemon needs Redis', [
      'redis.url: set it, e.g. redis://redis:6379 (the one-shot commands work without Redis, the daemon does not)',
    ]);
  const logger = opts.logger;
  const daemonCfg = first.config.daemon;
  const factory = redisFactory(first);
  const connections: RedisClient[] = [];
  // Every error of a connection, queue, flow or worker is one log line, repeats rate-limited.
  const reportError = errorReporter(logger);
  const conn = (purpose: string): RedisClient => {
    const c = factory.create(purpose, reportError(`redis:${purpose}`));
    connections.push(c);
    return c;
  };
  const redis = conn('state');
  const prefix = factory.bullPrefix;
  const bull = { prefix };
  // Locks are renewed while a job runs (long reconciles included); a dead replica's jobs are
  // moved back to wait by another replica's stalled check once their lock has expired.
  const lockMs = daemonCfg.jobLockSeconds * 1000;
  const locks = { lockDuration: lockMs, stalledInterval: lockMs / 2 };
  const queues = {
    reconcile: new Queue(QUEUE_NAMES.reconcile, { connection: conn('queue-reconcile'), ...bull }),
    audit: new Queue(QUEUE_NAMES.audit, { connection: conn('queue-audit'), ...bull }),
    apply: new Queue(QUEUE_NAMES.apply, { connection: conn('queue-apply'), ...bull }),
  };
  const flow = new FlowProducer({ connection: conn('flow'), ...bull });
  // Created once Redis answers: its blocking reader is a duplicate of the connection that
  // BullMQ cannot close while Redis has never been reached (a stop would then hang on it).
  let applyEvents: QueueEvents | undefined;
  for (const q of Object.values(queues)) q.on('error', reportError(`queue:${q.name}`));
  flow.on('error', reportError('flow'));

  const workers: Worker[] = [];
  let applyWorker: Worker | undefined;
  const tenants = new Map<string, TenantRuntime>();
  for (const loaded of all) {
    tenants.set(
      loaded.config.tenant,
      createTenantRuntime(loaded, {
        redis,
        keyPrefix: factory.keyPrefix,
        logger,
        onRateLimited: (ms) => void applyWorker?.rateLimit(ms).catch(() => undefined),
      }),
    );
  }
  // Aborted once the shutdown bound has elapsed: reconciles stop waiting, apply chunks stop between tasks.
  const shutdown = new AbortController();
  // Processors still running: close() waits for these within the bound (BullMQ's own close
  // would wait for them without one).
  const running = new Set<Promise<unknown>>();
  const track = <T>(p: Promise<T>): Promise<T> => {
    running.add(p);
    const forget = (): void => void running.delete(p);
    p.then(forget, forget);
    return p;
  };
  const unwatch: Array<() => void> = [];
  const changeSources = new Map<string, ChangeSource>();
  const streams: ChangeStream[] = [];
  let server: ObservabilityServer | undefined;
  let statusPage: StatusPageServer | undefined;
  let started = false;

  const instrumentWorker = (w: Worker, queue: string): Worker => {
    w.on('completed', (job: Job) => recordJob(queue, 'completed', durationOf(job)));
    w.on('failed', (job: Job | undefined, err: Error) => {
      const willRetry = job !== undefined && job.attemptsMade < (job.opts.attempts ?? 1) && err.name !== 'UnrecoverableError';
      recordJob(queue, willRetry ? 'retried' : 'failed', job ? durationOf(job) : undefined);
      logger.warn({ queue, jobId: job?.id, err: err.message, willRetry }, 'job failed');
    });
    w.on('error', reportError(`worker:${queue}`));
    workers.push(w);
    return w;
  };

  // Gauges that describe cluster-wide state are refreshed from Redis on a timer, so every
  // replica reports the same values and none stays stale after another replica's run.
  const refreshAuditGauges = async (): Promise<void> => {
    for (const rt of tenants.values()) {
      await Promise.all([rt.state.quarantine(), rt.state.heldDeletes()])
        .then(([q, held]) => {
          setQuarantined(rt.id, q.quarantined);
          setDeletesHeld(rt.id, held?.count ?? 0);
        })
        .catch(() => undefined);
      if (!rt.loaded.config.audit) continue;
      await auditStatus({
        tenant: rt.id,
        state: new RedisAuditStateStore(redis, factory.keyPrefix, rt.id),
        deadLetters: new RedisDeadLetterStore(redis, factory.keyPrefix, rt.id),
        observer: auditRecorder(rt.id, undefined),
      }).catch(() => undefined);
    }
  };

  const want = new Set(opts.workers ?? ['reconcile', 'audit', 'apply']);
  // One key in each hash slot the daemon writes to: the queues' and every tenant's.
  const slotKeys = [`${prefix}:ready`, ...[...tenants.keys()].map((t) => tenantKeys(factory.keyPrefix, t).quarantine)];
  const probeMs = 1_000;
  // Aborted by close(): a start still waiting for Redis gives up.
  const closing = new AbortController();
  const daemon: Daemon = {
    tenants,
    async start() {
      initMetrics();
      // The HTTP server first: a daemon waiting for Redis is alive (/healthz), says why it is
      // not ready (/readyz) and serves its metrics; a taken port fails before anything else.
      const http = opts.http ?? daemonCfg.http;
      const uiCfg = daemonCfg.ui;
      statusPage = uiCfg.enabled
        ? createStatusPageServer({
            config: uiCfg,
            readToken: first.secrets.files.get('daemon.ui.readTokenFile'),
            redactedReadToken: first.secrets.files.get('daemon.ui.redactedReadTokenFile'),
            logger,
            backend: daemonUiBackend({
              tenants,
              redis,
              keyPrefix: factory.keyPrefix,
              reconcileQueue: queues.reconcile,
              status: () => daemon.status(),
              logger,
              actionToken: first.secrets.files.get('daemon.ui.actionTokenFile'),
              logRecords: uiCfg.logRecords,
            }),
          })
        : undefined;
      server = createObservabilityServer({
        host: http.host,
        port: http.port,
        ready: () => daemon.ready(),
        status: () => daemon.status(),
        logger,
      });
      const { url } = await listenNamingKey(server, http, opts.http ? 'the test server' : 'daemon.http.port');
      const uiUrl = statusPage ? (await statusPage.listen()).url : undefined;
      if (!(await untilRedisAnswers(() => probeSlots(redis, slotKeys, probeMs), factory.describe, logger, closing.signal)))
        return { url, ...(uiUrl ? { uiUrl } : {}) };
      applyEvents = new QueueEvents(QUEUE_NAMES.apply, { connection: conn('events-apply'), ...bull });
      applyEvents.on('error', reportError(`queue-events:${QUEUE_NAMES.apply}`));
      const events = applyEvents;
      await opts.whenRedisReady?.();
      await checkRedisRequirements(redis, logger);
      // Tenants whose source reports its changes: a change stream each (one replica runs it).
      if (want.has('reconcile')) for (const [id, source] of await openChangeSources(tenants, logger)) changeSources.set(id, source);
      await registerSchedulers(queues, tenants.values(), new Set(changeSources.keys()));
      if (want.has('apply')) {
        applyWorker = instrumentWorker(
          new Worker<ChunkJobData | Record<string, unknown>>(
            QUEUE_NAMES.apply,
            async (job, token) =>
              job.name === 'chunk'
                ? track(
                    processChunk(job as Job<ChunkJobData>, token, {
                      redis,
                      keyPrefix: factory.keyPrefix,
                      tenants,
                      logger,
                      lockMs,
                      signal: shutdown.signal,
                    }),
                  )
                : { barrier: true },
            { connection: conn('worker-apply'), ...bull, ...locks, concurrency: daemonCfg.concurrency.apply },
          ),
          QUEUE_NAMES.apply,
        );
      }
      if (want.has('reconcile')) {
        instrumentWorker(
          new Worker<ReconcileJobData>(
            QUEUE_NAMES.reconcile,
            (job, token) =>
              track(
                processReconcile(
                  job,
                  {
                    redis,
                    keyPrefix: factory.keyPrefix,
                    tenants,
                    flow,
                    applyEvents: events,
                    applyQueue: queues.apply,
                    logger,
                    signal: shutdown.signal,
                  },
                  token,
                ),
              ),
            {
              connection: conn('worker-reconcile'),
              ...bull,
              concurrency: daemonCfg.concurrency.reconcile,
              ...locks,
            },
          ),
          QUEUE_NAMES.reconcile,
        );
      }
      if (want.has('audit')) {
        instrumentWorker(
          new Worker<AuditJobData | AuditVerifyJobData>(
            QUEUE_NAMES.audit,
            (job) => {
              const deps = { redis, keyPrefix: factory.keyPrefix, tenants, logger, signal: shutdown.signal };
              return job.name === AUDIT_VERIFY_JOB
                ? track(processAuditVerify(job as Job<AuditVerifyJobData>, deps))
                : track(processAudit(job as Job<AuditJobData>, deps));
            },
            {
              connection: conn('worker-audit'),
              ...bull,
              concurrency: daemonCfg.concurrency.audit,
              ...locks,
            },
          ),
          QUEUE_NAMES.audit,
        );
      }
      const owner = replicaOwner();
      for (const [id, source] of changeSources) {
        const stream = new ChangeStream(
          {
            rt: tenants.get(id)!,
            source,
            redis,
            keyPrefix: factory.keyPrefix,
            flow,
            applyEvents: events,
            applyQueue: queues.apply,
            reconcileQueue: queues.reconcile,
            logger,
          },
          owner,
        );
        stream.start();
        streams.push(stream);
      }
      // Labelled with the BullMQ queue name, as scimsync_jobs_total and the job duration are.
      for (const q of Object.values(queues)) unwatch.push(watchQueueDepth(q.name, () => q.getJobCounts(...QUEUE_STATES)));
      // Lag must keep growing between runs, or a stalled export would look healthy.
      const lagTimer = setInterval(() => void refreshAuditGauges(), 30_000);
      lagTimer.unref();
      unwatch.push(() => clearInterval(lagTimer));
      void refreshAuditGauges();
      started = true;
      logger.info({ url, ...(uiUrl ? { uiUrl } : {}), tenants: [...tenants.keys()], workers: [...want] }, 'daemon started');
      return { url, ...(uiUrl ? { uiUrl } : {}) };
    },
    async ready() {
      const checks: Record<string, boolean | string> = {};
      // The slots the daemon writes to, not just any node: a Cluster answers PING while the
      // master of the daemon's keys is dead and its replica not promoted yet.
      checks['redis'] = await probeSlots(redis, slotKeys, probeMs);
      checks['workers'] = started && workers.length > 0 && workers.every((w) => w.isRunning());
      return { ready: Object.values(checks).every((v) => v === true), checks };
    },
    status: () => daemonStatus({ tenants, queues, redis, keyPrefix: factory.keyPrefix }),
    async close() {
      closing.abort();
      const bound = daemonCfg.shutdownTimeoutSeconds * 1000;
      const deadline = Date.now() + bound;
      const left = (): number => Math.max(0, deadline - Date.now());
      logger.info({ boundMs: bound }, 'shutting down: no new jobs; waiting for running jobs');
      const abandon = (): void => {
        if (shutdown.signal.aborted) return;
        logger.warn('running jobs did not finish in time: abandoning them (another replica or the next start recovers them as stalled)');
        // Processors stop now: a reconcile stops waiting on its fan-out, an apply chunk stops
        // between tasks (the task in flight is not reported as failed).
        shutdown.abort(new Error('shutdown'));
      };
      // Change streams first: a batch in flight stops (its cursor is not advanced) and the lease goes to another replica.
      await withTimeout(Promise.all(streams.map((st) => st.stop())), left()).catch(() => undefined);
      // Stop fetching new jobs everywhere at once, then give running jobs the bound.
      await withTimeout(Promise.all(workers.map((w) => w.pause(true).catch(() => undefined))), left()).catch(() => undefined);
      const drain = async (): Promise<void> => {
        while (running.size > 0) await Promise.allSettled([...running]);
      };
      const drained = await withTimeout(drain(), left()).then(
        () => true,
        () => false,
      );
      if (!drained) abandon();
      // Forced when jobs were abandoned: a worker's graceful close would wait for them forever
      // (and a later close(true) only returns that same pending close). A graceful close is
      // bounded too: a job fetched while pausing may have started after the drain.
      const closingWorkers = Promise.all(workers.map((w) => w.close(!drained).catch(() => undefined)));
      const closed = await withTimeout(closingWorkers, left()).then(
        () => true,
        () => false,
      );
      if (!closed) {
        abandon();
        await withTimeout(closingWorkers, 5_000).catch(() => logger.warn('workers did not close; closing their connections'));
      }
      for (const u of unwatch) u();
      await statusPage?.close();
      await server?.close();
      // Bounded: with Redis unreachable a graceful close would wait for it forever.
      const briefly = (p: Promise<unknown>): Promise<unknown> => withTimeout(p, 2_000).catch(() => undefined);
      const bullObjects = [...(applyEvents ? [applyEvents] : []), flow, ...Object.values(queues)];
      await Promise.all(bullObjects.map((b) => briefly(b.close())));
      await Promise.all([...tenants.values()].map((t) => briefly(t.close())));
      // QUIT to a connection that is up; one that is reconnecting would queue it and retry forever.
      await Promise.all(
        connections.map((c) =>
          c.status === 'ready' ? withTimeout(c.quit(), 1_000).catch(() => c.disconnect()) : c.status === 'end' ? undefined : c.disconnect(),
        ),
      );
      logger.info('daemon stopped');
    },
  };
  return daemon;
}

/** Rejects after `ms`; the timer is cleared either way, so it never holds the process open at exit. */
function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('timeout')), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

function durationOf(job: Job): number | undefined {
  return job.processedOn && job.finishedOn ? (job.finishedOn - job.processedOn) / 1000 : undefined;
}
