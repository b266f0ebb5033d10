import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Counter, Registry } from 'prom-client';
import { createObservabilityServer, type ObservabilityServerOptions, type ReadyResult } from '../../src/observability/http-server.ts';
import { captureLogger } from './support.ts';

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

async function start(over: Partial<ObservabilityServerOptions> = {}) {
  const registry = new Registry();
  const hits = new Counter({ name: 'scimsync_test_hits_total', help: 'test counter', labelNames: ['tenant'], registers: [registry] });
  hits.inc({ tenant: 'acme' }, 3);
  const log = captureLogger('info');
  const srv = createObservabilityServer({
    host: '127.0.0.1',
    port: 0,
    registry,
    logger: log.logger,
    ready: async () => ({ ready: true, checks: { redis: true, workers: true } }),
    status: async () => ({ tenants: [{ tenant: 'acme', cursor: '2026-11-21T12:00:00.000Z' }] }),
    ...over,
  });
  open.push(srv);
  const { url } = await srv.listen();
  return { url, log, srv };
}

describe('observability HTTP server', () => {
  it('serves the registry on /metrics in the Prometheus text format', async () => {
    const { url } = await start();
    const res = await fetch(`${url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(await res.text()).toContain('scimsync_test_hits_total{tenant="acme"} 3');
  });

  it('serves /status without anything that may quote a person: failed refs, messages and reasons become codes or go', async () => {
    const doc = {
      tenants: [
        {
          tenant: 'acme',
          quarantine: { quarantined: true, failures: 3, reason: 'E_CONFLICT: alice@example.com is held by emp-100' },
          heldDeletes: { count: 8, reasons: ['8 deactivations exceed maxDeletes (5)'] },
          runs: {
            reconcile: [
              {
                result: 'partial',
                detail: {
                  failed: 1,
                  firstFailures: [
                    { action: 'user.update', ref: 'alice@example.com', code: 'E_REJECTED', message: 'alice@example.com: bad title' },
                  ],
                  attributeErrors: [{ name: 'clearance', message: 'alice@example.com: secret' }],
                },
              },
            ],
            audit: [{ result: 'failed', detail: { code: 'E_EXPORT_NOT_CSV', message: 'login page for alice@example.com' } }],
          },
        },
      ],
    };
    const { url } = await start({ status: async () => doc });
    const body = await (await fetch(`${url}/status`)).text();
    expect(body).not.toContain('alice@example.com');
    expect(body).not.toContain('emp-100');
    const parsed = JSON.parse(body) as typeof doc;
    const t = parsed.tenants[0]!;
    expect(t.quarantine).toEqual({ quarantined: true, failures: 3, reason: 'E_CONFLICT' });
    expect(t.heldDeletes.reasons).toEqual(['8 deactivations exceed maxDeletes (5)']);
    expect(t.runs.reconcile[0]!.detail.firstFailures).toEqual([{ action: 'user.update', code: 'E_REJECTED' }]);
    expect(t.runs.audit[0]!.detail).toEqual({ code: 'E_EXPORT_NOT_CSV' });
  });

  it('answers /healthz without calling any dependency', async () => {
    let calls = 0;
    const failing = async (): Promise<never> => {
      calls++;
      throw new Error('redis down');
    };
    const { url } = await start({ ready: failing, status: failing });
    const res = await fetch(`${url}/healthz`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await res.json()).toEqual({ status: 'ok' });
    expect(calls).toBe(0);
  });

  it('returns 200 on /readyz when ready and 503 with the checks when not', async () => {
    let state: ReadyResult = { ready: true, checks: { redis: true, workers: true } };
    const { url } = await start({ ready: async () => state });
    const ok = await fetch(`${url}/readyz`);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ status: 'ready', checks: { redis: true, workers: true } });
    state = { ready: false, checks: { redis: 'connection refused', workers: true } };
    const down = await fetch(`${url}/readyz`);
    expect(down.status).toBe(503);
    expect(await down.json()).toEqual({ status: 'not_ready', checks: { redis: 'connection refused', workers: true } });
  });

  it('returns the status callback as JSON on /status', async () => {
    const { url } = await start();
    const res = await fetch(`${url}/status?pretty=1`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await res.json()).toEqual({ tenants: [{ tenant: 'acme', cursor: '2026-11-21T12:00:00.000Z' }] });
  });

  it('answers 500 with a generic message when a callback throws or hangs, and logs the cause', async () => {
    const { url, log } = await start({
      status: async () => {
        throw new Error('ECONNREFUSED redis.internal:6379');
      },
      ready: () => new Promise(() => {}),
      callbackTimeoutMs: 100,
    });
    const res = await fetch(`${url}/status`);
    expect(res.status).toBe(500);
    const body = await res.text();
    expect(JSON.parse(body)).toEqual({ error: 'internal error' });
    expect(body).not.toContain('redis.internal');
    const hung = await fetch(`${url}/readyz`);
    expect(hung.status).toBe(500);
    const errors = log.records().filter((r) => r['level'] === 50);
    expect(errors.map((r) => r['path'])).toEqual(['/status', '/readyz']);
    expect(log.text()).toContain('redis.internal');
    expect(log.text()).toContain('did not answer within 100 ms');
    // The server keeps serving after a failure.
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
  });

  it('answers HEAD without a body, 405 for other methods and 404 for unknown paths', async () => {
    const { url } = await start();
    const head = await fetch(`${url}/metrics`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(Number(head.headers.get('content-length'))).toBeGreaterThan(0);
    expect(await head.text()).toBe('');
    const post = await fetch(`${url}/metrics`, { method: 'POST', body: 'x' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    const missing = await fetch(`${url}/admin`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ error: 'not found' });
  });

  it('answers a malformed request with 400 and closes even with an idle keep-alive client', async () => {
    const { url, srv } = await start();
    const { port } = new URL(url);
    const reply = await new Promise<string>((resolve, reject) => {
      const sock = connect(Number(port), '127.0.0.1', () => sock.write('NONSENSE\r\n\r\n'));
      let data = '';
      sock.on('data', (c) => (data += c.toString()));
      sock.on('end', () => resolve(data));
      sock.on('error', reject);
    });
    expect(reply).toMatch(/^HTTP\/1\.1 400/);
    // An idle keep-alive connection must not hold close() open.
    const idle = connect(Number(port), '127.0.0.1');
    await new Promise((r) => idle.once('connect', r));
    idle.write('GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n');
    await new Promise((r) => idle.once('data', r));
    const t0 = performance.now();
    await srv.close();
    expect(performance.now() - t0).toBeLessThan(1_000);
    expect(srv.server.listening).toBe(false);
    idle.destroy();
  });

  it('reports a port already in use as a listen error', async () => {
    const { url } = await start();
    const taken = createObservabilityServer({
      host: '127.0.0.1',
      port: Number(new URL(url).port),
      logger: captureLogger().logger,
      ready: async () => ({ ready: true, checks: {} }),
      status: async () => ({}),
    });
    await expect(taken.listen()).rejects.toMatchObject({ code: 'EADDRINUSE' });
  });
});
