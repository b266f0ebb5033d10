/**
 * The daemon: `buildDaemon(tenants)` wires Redis, BullMQ queues, workers and schedulers,
 * per-tenant runtimes and the observability server; `start()` and `close()` are explicit and
 * importing this module has no side effects. Several replicas can run it at once.
 */
import { FlowProducer, Queue, QueueEvents, Worker, type Job } from 'bullmq';
import type { LoadedConfig } from './config/load.ts';
import { ConfigError } from './platform/errors.ts';
import type { Logger } from './observability/logger.ts';
import { initMetrics } from './observability/metrics.ts';
import { recordJob } from './observability/instrument.ts';
import { createObservabilityServer, type ObservabilityServer } from './observability/http-server.ts';
import { QUEUE_STATES, watchQueueDepth } from './jobs/metrics.ts';
import { processChunk, type ChunkJobData } from './jobs/apply-job.ts';
import { processAudit, type AuditJobData } from './jobs/audit-job.ts';
import { processReconcile, type ReconcileJobData } from './jobs/reconcile-job.ts';
import { QUEUE_NAMES } from './jobs/keys.ts';
import { checkRedisRequirements, redisFactory, type RedisClient } from './jobs/redis.ts';
import { registerSchedulers } from './jobs/schedulers.ts';
import { createTenantRuntime, type TenantRuntime } from './jobs/tenant-runtime.ts';
import { daemonStatus } from './jobs/status.ts';
import { sleep } from './platform/retry.ts';
import { auditStatus } from './audit/status.ts';
import { RedisAuditStateStore } from './audit/state/redis-store.ts';
import { RedisDeadLetterStore } from './audit/dead-letter/redis-store.ts';

export interface Daemon {
  start(): Promise<{ url: string }>;
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
}

export function buildDaemon(all: LoadedConfig[], opts: DaemonOptions): Daemon {
  const first = all[0];
  if (!first) throw new ConfigError('no tenant configured', ['tenants: add at least one tenant']);
  if (!first.config.redis) throw new ConfigError('the daemon needs Redis', ['redis.url: set it, e.g. redis://redis:6379 (the one-shot commands work without Redis, the daemon does not)']);
  const logger = opts.logger;
  const daemonCfg = first.config.daemon;
  const factory = redisFactory(first);
  const connections: RedisClient[] = [];
  const conn = (purpose: string): RedisClient => {
    const c = factory.create(purpose);
    c.on('error', (e: Error) => logger.warn({ purpose, err: e.message }, 'redis connection error'));
    connections.push(c);
    return c;
  };
  const redis = conn('state');
  const prefix = factory.bullPrefix;
  const bull = { prefix };
  const queues = {
    reconcile: new Queue(QUEUE_NAMES.reconcile, { connection: conn('queue-reconcile'), ...bull }),
    audit: new Queue(QUEUE_NAMES.audit, { connection: conn('queue-audit'), ...bull }),
    apply: new Queue(QUEUE_NAMES.apply, { connection: conn('queue-apply'), ...bull }),
  };
  const flow = new FlowProducer({ connection: conn('flow'), ...bull });
  const applyEvents = new QueueEvents(QUEUE_NAMES.apply, { connection: conn('events-apply'), ...bull });

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
  const shutdown = new AbortController();
  const unwatch: Array<() => void> = [];
  let server: ObservabilityServer | undefined;
  let started = false;

  const instrumentWorker = (w: Worker, queue: string): Worker => {
    w.on('completed', (job: Job) => recordJob(queue, 'completed', durationOf(job)));
    w.on('failed', (job: Job | undefined, err: Error) => {
      const willRetry = job !== undefined && job.attemptsMade < (job.opts.attempts ?? 1) && err.name !== 'UnrecoverableError';
      recordJob(queue, willRetry ? 'retried' : 'failed', job ? durationOf(job) : undefined);
      logger.warn({ queue, jobId: job?.id, err: err.message, willRetry }, 'job failed');
    });
    w.on('error', (err: Error) => logger.warn({ queue, err: err.message }, 'worker error'));
    workers.push(w);
    return w;
  };

  const refreshAuditGauges = async (): Promise<void> => {
    for (const rt of tenants.values()) {
      if (!rt.loaded.config.audit) continue;
      await auditStatus({ tenant: rt.id, state: new RedisAuditStateStore(redis, factory.keyPrefix, rt.id), deadLetters: new RedisDeadLetterStore(redis as never, factory.keyPrefix, rt.id) }).catch(() => undefined);
    }
  };

  const want = new Set(opts.workers ?? ['reconcile', 'audit', 'apply']);
  const daemon: Daemon = {
    tenants,
    async start() {
      initMetrics();
      await checkRedisRequirements(redis, logger);
      await registerSchedulers(queues, tenants.values());
      if (want.has('apply')) {
        applyWorker = instrumentWorker(
          new Worker<ChunkJobData | Record<string, unknown>>(
            QUEUE_NAMES.apply,
            async (job) => (job.name === 'chunk' ? processChunk(job as Job<ChunkJobData>, { redis, keyPrefix: factory.keyPrefix, tenants, logger }) : { barrier: true }),
            { connection: conn('worker-apply'), ...bull, concurrency: daemonCfg.concurrency.apply },
          ),
          QUEUE_NAMES.apply,
        );
      }
      if (want.has('reconcile')) {
        instrumentWorker(
          new Worker<ReconcileJobData>(QUEUE_NAMES.reconcile, (job) => processReconcile(job, { redis, keyPrefix: factory.keyPrefix, bullPrefix: prefix, tenants, flow, applyEvents, logger }), {
            connection: conn('worker-reconcile'),
            ...bull,
            concurrency: daemonCfg.concurrency.reconcile,
            // A reconcile can run long (fan-out waits); the lock is renewed while it runs.
            lockDuration: 60_000,
          }),
          QUEUE_NAMES.reconcile,
        );
      }
      if (want.has('audit')) {
        instrumentWorker(
          new Worker<AuditJobData>(QUEUE_NAMES.audit, (job) => processAudit(job, { redis, keyPrefix: factory.keyPrefix, tenants, logger, signal: shutdown.signal }), {
            connection: conn('worker-audit'),
            ...bull,
            concurrency: daemonCfg.concurrency.audit,
            lockDuration: 60_000,
          }),
          QUEUE_NAMES.audit,
        );
      }
      for (const [name, q] of Object.entries(queues)) unwatch.push(watchQueueDepth(name, () => q.getJobCounts(...QUEUE_STATES)));
      // Lag must keep growing between runs, or a stalled export would look healthy.
      const lagTimer = setInterval(() => void refreshAuditGauges(), 30_000);
      lagTimer.unref();
      unwatch.push(() => clearInterval(lagTimer));
      void refreshAuditGauges();
      const http = opts.http ?? daemonCfg.http;
      server = createObservabilityServer({ host: http.host, port: http.port, ready: () => daemon.ready(), status: () => daemon.status(), logger });
      const { url } = await server.listen();
      started = true;
      logger.info({ url, tenants: [...tenants.keys()], workers: [...want] }, 'daemon started');
      return { url };
    },
    async ready() {
      const checks: Record<string, boolean | string> = {};
      try {
        await Promise.race([redis.ping(), sleep(1_000).then(() => Promise.reject(new Error('timeout')))]);
        checks['redis'] = true;
      } catch (e) {
        checks['redis'] = (e as Error).message || 'unreachable';
      }
      checks['workers'] = started && workers.length > 0 && workers.every((w) => w.isRunning());
      return { ready: Object.values(checks).every((v) => v === true), checks };
    },
    status: () => daemonStatus({ tenants, queues, redis, keyPrefix: factory.keyPrefix }),
    async close() {
      const bound = daemonCfg.shutdownTimeoutSeconds * 1000;
      logger.info({ boundMs: bound }, 'shutting down: no new jobs; waiting for running jobs');
      // Stop fetching new jobs everywhere at once, then give running jobs the bound.
      await Promise.all(workers.map((w) => w.pause(true).catch(() => undefined)));
      const graceful = Promise.all(workers.map((w) => w.close())).then(() => true);
      const finished = await Promise.race([graceful, sleep(bound).then(() => false)]);
      if (!finished) {
        logger.warn('running jobs did not finish in time: abandoning them (another replica or the next start recovers them as stalled)');
        shutdown.abort(new Error('shutdown'));
        await Promise.all(workers.map((w) => w.close(true).catch(() => undefined)));
      }
      for (const u of unwatch) u();
      await server?.close();
      await applyEvents.close().catch(() => undefined);
      await flow.close().catch(() => undefined);
      await Promise.all(Object.values(queues).map((q) => q.close().catch(() => undefined)));
      await Promise.all([...tenants.values()].map((t) => t.close().catch(() => undefined)));
      await Promise.all(connections.map((c) => c.quit().catch(() => c.disconnect())));
      logger.info('daemon stopped');
    },
  };
  return daemon;
}

function durationOf(job: Job): number | undefined {
  return job.processedOn && job.finishedOn ? (job.finishedOn - job.processedOn) / 1000 : undefined;
}
