/**
 * Job-queue metrics on the shared registry. Queue depths are read from Redis at scrape
 * time (a collect() callback), so they are never stale between scrapes; the job counters
 * are updated by the workers through observability/instrument.ts.
 */
import { Counter, Gauge, Histogram } from 'prom-client';
import { METRIC_PREFIX, registry } from '../observability/metrics.ts';

/** The BullMQ states exported as `state` (a closed set, whatever the counts function returns). */
export const QUEUE_STATES = ['waiting', 'active', 'delayed', 'completed', 'failed', 'prioritized', 'waiting-children'] as const;
export type QueueState = (typeof QUEUE_STATES)[number];
export type JobResult = 'completed' | 'failed' | 'retried';

/** What `queue.getJobCounts(...QUEUE_STATES)` resolves to. */
export type JobCountsFn = () => Promise<Record<string, number>>;

/** A scrape must not hang on a stuck Redis: give up on the depths after this long (default), milliseconds. */
export const QUEUE_COUNT_TIMEOUT_MS = 2_000;

const sources = new Map<string, { counts: JobCountsFn; timeoutMs: number }>();

async function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`queue counts timed out after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([p, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export const jobMetrics = {
  queueJobs: new Gauge({
    name: `${METRIC_PREFIX}queue_jobs`,
    help: 'Jobs in each queue by state, read from Redis at scrape time (absent while Redis does not answer)',
    labelNames: ['queue', 'state'] as const,
    registers: [registry],
    async collect() {
      await Promise.all(
        [...sources].map(async ([queue, { counts, timeoutMs }]) => {
          try {
            const c = await withTimeout(counts(), timeoutMs);
            for (const state of QUEUE_STATES) jobMetrics.queueJobs.set({ queue, state }, c[state] ?? 0);
          } catch {
            // Stale depths would hide an outage: drop the series, so "absent" is what alerts see.
            for (const state of QUEUE_STATES) jobMetrics.queueJobs.remove({ queue, state });
          }
        }),
      );
    },
  }),
  jobs: new Counter({
    name: `${METRIC_PREFIX}jobs_total`,
    help: 'Jobs finished by the workers of this replica, by result (completed, failed, retried)',
    labelNames: ['queue', 'result'] as const,
    registers: [registry],
  }),
  duration: new Histogram({
    name: `${METRIC_PREFIX}job_duration_seconds`,
    help: 'Processing time of one job attempt',
    labelNames: ['queue'] as const,
    buckets: [0.1, 0.5, 1, 5, 10, 30, 60, 120, 300, 600, 1800, 3600], // seconds, up to 1 h
    registers: [registry],
  }),
};

/**
 * Export the depths of `queue` on every scrape, e.g.
 * `watchQueueDepth('reconcile', () => queue.getJobCounts(...QUEUE_STATES))`.
 * Returns a function that stops watching (call it when the queue is closed).
 */
export function watchQueueDepth(queue: string, counts: JobCountsFn, opts: { timeoutMs?: number } = {}): () => void {
  const entry = { counts, timeoutMs: opts.timeoutMs ?? QUEUE_COUNT_TIMEOUT_MS };
  sources.set(queue, entry);
  return () => {
    if (sources.get(queue) !== entry) return;
    sources.delete(queue);
    for (const state of QUEUE_STATES) jobMetrics.queueJobs.remove({ queue, state });
  };
}
