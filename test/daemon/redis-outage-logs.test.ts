/**
 * A Redis outage as the on-call engineer reads it: every error of the daemon's connections,
 * queues, queue events, flow producer and workers is a JSON log line (no raw multi-line
 * stack trace on stderr), and the same error repeated by every connection on every reconnect
 * is logged once per window instead of hundreds of times.
 */
import { describe, expect, it } from 'vitest';
import { people } from '../helpers/reconcile-harness.ts';
import { createDaemonWorkspace, httpGet, waitFor } from '../helpers/daemon-harness.ts';
import { startRedisServer } from '../helpers/redis-server.ts';
import { closingAfterEach } from './support.ts';

const TOKEN = 'outage-logs-token-5e2a8c1f7d';
const { sim } = closingAfterEach();

describe('Redis outage logs', () => {
  it('Redis gone for a few seconds: stderr holds only JSON lines, no stack trace, and the repeated errors are logged once', {
    timeout: 60_000,
  }, async () => {
    const redis = await startRedisServer();
    const platform = await sim(TOKEN);
    const ws = createDaemonWorkspace({ redisUrl: redis.url, env: { SIM_URL: platform.url, SIM_TOKEN: TOKEN } });
    try {
      ws.writeDirectory({ users: people(1, 3), groups: [] });
      // A scheduled tick every second keeps the queues busy while Redis is away.
      ws.writeConfig({ schedules: { reconcile: { pattern: '* * * * * *' } } });
      const d = await ws.spawnDaemon();
      await redis.stop();
      const down = Date.now();
      await waitFor(async () => (await httpGet(`${d.url}/readyz`)).status === 503, '/readyz to notice', 10_000, 100);
      await new Promise((r) => setTimeout(r, Math.max(0, 6_000 - (Date.now() - down))));
      await redis.start();
      await waitFor(async () => (await httpGet(`${d.url}/readyz`)).status === 200, '/readyz to recover', 20_000, 100);
      const out = d.output();
      expect(out).not.toMatch(/^\s+at /m);
      const stray = out.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('{'));
      expect(stray).toEqual([]);
      const stopped = await Promise.race([d.stop(), new Promise<'hung'>((r) => setTimeout(() => r('hung'), 15_000))]);
      expect(stopped === 'hung' ? 'hung' : stopped.code, d.output().slice(-3000)).toBe(0);
      const errors = d.logs.filter((l) => l.msg === 'redis/queue error');
      expect(errors.length).toBeGreaterThan(0);
      // One line per distinct error per 30 s window, whichever of the ~10 connections reports it.
      const distinct = new Set(errors.map((l) => `${String(l['code'])}|${String(l['err'])}`));
      expect(errors.length).toBe(distinct.size);
      expect(errors.length).toBeLessThanOrEqual(6);
      for (const l of errors) expect(typeof l['component']).toBe('string');
    } finally {
      await ws.cleanup();
      await redis.destroy();
    }
  });
});
