/**
 * Redis unreachable as the operator meets it: every command that needs Redis fails within
 * `redis.connectTimeoutSeconds` with one line naming `redis.url` (never its password) and a
 * non-zero exit; the daemon binds its HTTP port first (alive, not ready, metrics served, no
 * stack traces), becomes ready by itself when Redis comes back, and a taken port fails the
 * start at once, naming `daemon.http.port`.
 */
import { createServer, type Server } from 'node:net';
import { describe, expect, it } from 'vitest';
import { people } from '../helpers/reconcile-harness.ts';
import { createDaemonWorkspace, httpGet, waitFor } from '../helpers/daemon-harness.ts';
import { startRedisServer } from '../helpers/redis-server.ts';
import { freePort } from '../helpers/slapd.ts';
import { closingAfterEach } from './support.ts';

const TOKEN = 'unreachable-token-7c2e91a4';
const URL_PASSWORD = 'url-password-4d1f8b';
const { sim } = closingAfterEach();

const noStackTrace = (text: string): void => {
  expect(text).not.toMatch(/^\s+at /m);
  expect(text).not.toContain('Unhandled error event');
};

describe('Redis unreachable', () => {
  it('status, trigger, approve-deletes, resume and log fail within redis.connectTimeoutSeconds with one line naming redis.url', {
    timeout: 60_000,
  }, async () => {
    const port = await freePort();
    const ws = createDaemonWorkspace({ redisUrl: `redis://127.0.0.1:${port}`, env: { SIM_URL: 'http://127.0.0.1:9', SIM_TOKEN: TOKEN } });
    try {
      ws.writeDirectory({ users: people(1, 2), groups: [] });
      ws.writeConfig({ redis: { url: `redis://ops:${URL_PASSWORD}@127.0.0.1:${port}`, connectTimeoutSeconds: 1 } });
      for (const args of [['status'], ['trigger', 'reconcile'], ['approve-deletes'], ['resume'], ['log']]) {
        const t0 = performance.now();
        const r = await ws.cli([...args, '--config', ws.configPath], { timeoutMs: 15_000 });
        const ms = performance.now() - t0;
        expect(r.code, `${args[0]}: ${r.stderr}`).toBe(1);
        const lines = r.stderr.trim().split('\n');
        expect(lines, args[0]).toHaveLength(1);
        expect(lines[0]).toContain('[E_REDIS_UNAVAILABLE]');
        expect(lines[0]).toContain(`redis.url redis://ops@127.0.0.1:${port}`);
        expect(lines[0]).toContain('within 1 s (redis.connectTimeoutSeconds)');
        expect(r.stderr + r.stdout).not.toContain(URL_PASSWORD);
        noStackTrace(r.stderr + r.stdout);
        // One second of waiting plus a Node start-up, never minutes.
        expect(ms, args[0]).toBeLessThan(10_000);
      }
    } finally {
      await ws.cleanup();
    }
  });

  it('Redis down at start: /healthz 200, /readyz 503 with the reason, metrics served; ready by itself once Redis is up', {
    timeout: 60_000,
  }, async () => {
    const redis = await startRedisServer();
    await redis.stop();
    const platform = await sim(TOKEN);
    const ws = createDaemonWorkspace({ redisUrl: redis.url, env: { SIM_URL: platform.url, SIM_TOKEN: TOKEN } });
    try {
      ws.writeDirectory({ users: people(1, 2), groups: [] });
      ws.writeConfig({});
      const d = await ws.spawnDaemon({ waitStarted: false });
      const listening = await d.waitForLog((l) => l.msg === 'observability server listening', 15_000);
      const url = String(listening['url']);
      expect((await httpGet(`${url}/healthz`)).status).toBe(200);
      const ready = await httpGet(`${url}/readyz`);
      expect(ready.status).toBe(503);
      const body = JSON.parse(ready.body) as { checks: Record<string, unknown> };
      expect(typeof body.checks['redis']).toBe('string');
      expect(body.checks['workers']).toBe(false);
      expect((await httpGet(`${url}/metrics`)).status).toBe(200);
      const waiting = await d.waitForLog((l) => l.msg.startsWith('Redis does not answer'), 10_000);
      expect(String(waiting['redis'])).toBe(`redis.url ${redis.url}`);
      // A few seconds of reconnecting: errors are rate-limited JSON lines, never stack traces.
      await new Promise((r) => setTimeout(r, 3_000));
      await redis.start();
      await waitFor(async () => (await httpGet(`${url}/readyz`)).status === 200, '/readyz once Redis is back', 20_000, 100);
      await d.waitForLog((l) => l.msg === 'daemon started', 5_000);
      const out = d.output();
      noStackTrace(out);
      expect(out.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('{'))).toEqual([]);
      expect(d.logs.filter((l) => l.msg === 'redis/queue error').length).toBeLessThanOrEqual(6);
      expect((await d.stop()).code).toBe(0);
    } finally {
      await ws.cleanup();
      await redis.destroy();
    }
  });

  it('the daemon stops on SIGTERM while it waits for Redis', { timeout: 30_000 }, async () => {
    const ws = createDaemonWorkspace({
      redisUrl: `redis://127.0.0.1:${await freePort()}`,
      env: { SIM_URL: 'http://127.0.0.1:9', SIM_TOKEN: TOKEN },
    });
    try {
      ws.writeDirectory({ users: people(1, 2), groups: [] });
      ws.writeConfig({});
      const d = await ws.spawnDaemon({ waitStarted: false });
      await d.waitForLog((l) => l.msg.startsWith('Redis does not answer'), 15_000);
      const stopped = await d.stop();
      expect(stopped.code).toBe(0);
      expect(stopped.ms).toBeLessThan(10_000);
    } finally {
      await ws.cleanup();
    }
  });

  it('daemon.http.port taken: the start fails at once with one line naming daemon.http.port, before Redis is awaited', {
    timeout: 30_000,
  }, async () => {
    const holder: Server = createServer();
    await new Promise<void>((r) => holder.listen(0, '127.0.0.1', r));
    const taken = (holder.address() as { port: number }).port;
    const ws = createDaemonWorkspace({
      redisUrl: `redis://127.0.0.1:${await freePort()}`,
      env: { SIM_URL: 'http://127.0.0.1:9', SIM_TOKEN: TOKEN },
    });
    try {
      ws.writeDirectory({ users: people(1, 2), groups: [] });
      ws.writeConfig({ daemon: { http: { host: '127.0.0.1', port: taken } } });
      const d = await ws.spawnDaemon({ waitStarted: false });
      const exit = await d.exited;
      expect(exit.code).toBe(2);
      const errorLines = d
        .output()
        .split('\n')
        .filter((l) => l.startsWith('error'));
      expect(errorLines).toHaveLength(1);
      expect(errorLines[0]).toContain(`daemon.http.port: 127.0.0.1:${taken} is already in use`);
      expect(d.logs.some((l) => l.msg.startsWith('Redis does not answer'))).toBe(false);
      noStackTrace(d.output());
    } finally {
      holder.close();
      await ws.cleanup();
    }
  });
});
