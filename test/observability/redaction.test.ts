/**
 * End-to-end secret check: a real PlatformClient, instrumented by platformHooks, talks to a
 * server that answers 503 then 401 and echoes the Authorization header back in both the
 * body and a header. The token must appear in no log line and in no metric.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { platformHooks } from '../../src/observability/instrument.ts';
import { registry } from '../../src/observability/metrics.ts';
import { ErrorCodes, isSyncError } from '../../src/errors.ts';
import { PlatformClient } from '../../src/platform/http-client.ts';
import { captureLogger } from './support.ts';

const TOKEN = `tok-${Math.random().toString(36).slice(2)}-secret`;

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = undefined;
});

async function echoServer(): Promise<{ url: string; seen: string[] }> {
  const seen: string[] = [];
  let n = 0;
  server = createServer((req, res) => {
    const auth = req.headers.authorization ?? '';
    seen.push(auth);
    const status = ++n === 1 ? 503 : 401;
    const body = JSON.stringify({ error: `bad credential ${auth}`, detail: `you sent ${auth}` });
    res.writeHead(status, { 'content-type': 'application/json', 'x-echo-authorization': auth, 'retry-after': '0' });
    res.end(body);
  });
  await new Promise<void>((r) => server?.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

describe('secrets stay out of logs and metrics', () => {
  it('never logs or exports the platform token, even when the server echoes it', async () => {
    const { url, seen } = await echoServer();
    const tenant = 'redaction';
    const { logger, text } = captureLogger('debug');
    const client = new PlatformClient({
      baseUrl: url,
      token: TOKEN,
      allowInsecureHttp: true,
      retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 2 },
      hooks: platformHooks(tenant, logger),
    });
    let caught: unknown;
    try {
      await client.requestJson('GET', '/api/scim/v2/Users', { route: 'scim_users', what: 'list users' });
    } catch (e) {
      caught = e;
      // What a caller would do with the failure: log the classified error in full.
      logger.error({ err: e, tenant }, 'reconcile failed');
    } finally {
      await client.close();
    }

    // The server really saw (and echoed) the token, so the check below is meaningful.
    expect(seen).toEqual([`Bearer ${TOKEN}`, `Bearer ${TOKEN}`]);
    expect(isSyncError(caught) && caught.code).toBe(ErrorCodes.AUTH_INVALID);

    const logs = text();
    expect(logs).toContain('platform request retried');
    expect(logs).toContain('reconcile failed');
    expect(logs).not.toContain(TOKEN);

    const metrics = await registry.metrics();
    expect(metrics).toContain('scimsync_platform_requests_total{tenant="redaction",method="GET",route="scim_users",status="503"} 1');
    expect(metrics).toContain('scimsync_platform_requests_total{tenant="redaction",method="GET",route="scim_users",status="401"} 1');
    expect(metrics).toContain('scimsync_platform_retries_total{tenant="redaction",route="scim_users"} 1');
    expect(metrics).not.toContain(TOKEN);
  });

  it('counts network failures as status "network" and 429 waits as rate-limit time', async () => {
    let n = 0;
    server = createServer((req, res) => {
      n++;
      if (n === 1) return req.socket.destroy();
      if (n === 2) {
        res.writeHead(429, { 'retry-after': '0.05' });
        return res.end();
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    });
    await new Promise<void>((r) => server?.listen(0, '127.0.0.1', r));
    const tenant = 'network';
    const { logger } = captureLogger('info');
    const client = new PlatformClient({
      baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      token: TOKEN,
      allowInsecureHttp: true,
      retry: { maxAttempts: 4, baseDelayMs: 1, maxDelayMs: 2 },
      hooks: platformHooks(tenant, logger),
    });
    const res = await client.requestJson<{ ok: boolean }>('GET', '/x', { route: 'scim_spc' }).finally(() => client.close());
    expect(res.body).toEqual({ ok: true });
    const metrics = await registry.metrics();
    expect(metrics).toContain(`scimsync_platform_requests_total{tenant="${tenant}",method="GET",route="scim_spc",status="network"} 1`);
    expect(metrics).toContain(`scimsync_platform_rate_limited_total{tenant="${tenant}",route="scim_spc"} 1`);
    expect(metrics).toContain(`scimsync_platform_retries_total{tenant="${tenant}",route="scim_spc"} 2`);
    expect(metrics).toContain(`scimsync_rate_limit_wait_seconds_total{tenant="${tenant}"} 0.05`);
    // Only the two answered attempts (429, 200) are in the latency histogram.
    expect(metrics).toContain(`scimsync_platform_request_duration_seconds_count{tenant="${tenant}",method="GET",route="scim_spc"} 2`);
  });
});
