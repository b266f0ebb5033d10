/** Queue depths are read from a real BullMQ queue in Redis at scrape time. */
import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import { afterEach, describe, expect, it } from 'vitest';
import { QUEUE_STATES, watchQueueDepth } from '../../src/jobs/metrics.ts';
import { registry } from '../../src/observability/metrics.ts';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function depthLines(text: string, queue: string): string[] {
  return text.split('\n').filter((l) => l.startsWith(`scimsync_queue_jobs{queue="${queue}",`));
}

describe('queue depth gauge', () => {
  it('exports every state of a watched queue from Redis on each scrape, and stops when unwatched', async () => {
    const prefix = `test-obs-${randomUUID()}`;
    const queue = new Queue('reconcile', { connection: { host: '127.0.0.1', port: 6379 }, prefix });
    cleanups.push(async () => {
      await queue.obliterate({ force: true });
      await queue.close();
    });
    const label = `reconcile-${prefix.slice(-6)}`;
    const unwatch = watchQueueDepth(label, () => queue.getJobCounts(...QUEUE_STATES));
    cleanups.push(unwatch);

    await queue.add('run', { tenant: 'acme' });
    await queue.add('run', { tenant: 'acme' });
    await queue.add('run', { tenant: 'beta' }, { delay: 60_000 });
    let lines = depthLines(await registry.metrics(), label);
    expect(lines).toHaveLength(QUEUE_STATES.length);
    expect(lines).toContain(`scimsync_queue_jobs{queue="${label}",state="waiting"} 2`);
    expect(lines).toContain(`scimsync_queue_jobs{queue="${label}",state="delayed"} 1`);
    expect(lines).toContain(`scimsync_queue_jobs{queue="${label}",state="active"} 0`);

    await queue.add('run', { tenant: 'gamma' });
    lines = depthLines(await registry.metrics(), label);
    expect(lines).toContain(`scimsync_queue_jobs{queue="${label}",state="waiting"} 3`);

    unwatch();
    expect(depthLines(await registry.metrics(), label)).toEqual([]);
  });

  it('drops the series instead of failing the scrape when the counts cannot be read', async () => {
    let fail = false;
    cleanups.push(
      watchQueueDepth('flaky', async () => {
        if (fail) throw new Error('connect ECONNREFUSED 127.0.0.1:6379');
        return { waiting: 4 };
      }),
    );
    expect(depthLines(await registry.metrics(), 'flaky')).toContain('scimsync_queue_jobs{queue="flaky",state="waiting"} 4');
    fail = true;
    const text = await registry.metrics();
    expect(depthLines(text, 'flaky')).toEqual([]);
    expect(text).toContain('scimsync_build_info');
  });

  it('gives up on a hanging counts call within its bound, so a scrape never hangs on Redis', async () => {
    cleanups.push(watchQueueDepth('stuck', () => new Promise(() => {}), { timeoutMs: 50 }));
    const t0 = performance.now();
    const text = await registry.metrics();
    expect(performance.now() - t0).toBeLessThan(1_000);
    expect(depthLines(text, 'stuck')).toEqual([]);
  });
});
