/**
 * Enterprise networks: HTTPS_PROXY / HTTP_PROXY / NO_PROXY are honoured for the platform, the
 * HTTP-based sinks and the SCIM source, through a real local CONNECT proxy. The target runs
 * HTTPS with a private CA, which must still be verified inside the tunnel.
 */
import { createServer as createHttpsServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PlatformClient } from '../../src/platform/http-client.ts';
import { proxyFromEnv } from '../../src/platform/dispatcher.ts';
import { startConnectProxy, type ConnectProxy } from '../helpers/connect-proxy.ts';
import { makeTestPki, type TestPki } from '../helpers/receivers/test-ca.ts';
import { makeEvents, openSink } from '../audit/sinks/fixtures.ts';
import { Secret } from '../../src/config/secret.ts';
import { scimSourceSchema } from '../../src/sources/scim/schema.ts';
import { ScimSource } from '../../src/sources/scim/source.ts';

let pki: TestPki;
let target: Server;
let targetUrl: string;
const seen: string[] = [];
let proxy: ConnectProxy;

beforeAll(async () => {
  pki = makeTestPki();
  target = createHttpsServer({ key: pki.serverKey, cert: pki.serverCert }, (req, res) => {
    seen.push(`${req.method} ${req.url}`);
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        req.url?.startsWith('/services/collector')
          ? JSON.stringify({ text: 'Success', code: 0 })
          : JSON.stringify({ totalResults: 0, Resources: [] }),
      );
    });
  });
  await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
  targetUrl = `https://localhost:${(target.address() as AddressInfo).port}`;
});
afterAll(async () => {
  target.closeAllConnections();
  await new Promise<void>((resolve) => target.close(() => resolve()));
});
afterEach(async () => {
  seen.length = 0;
  await proxy?.close();
});

const client = (env: Record<string, string>) =>
  new PlatformClient({ baseUrl: targetUrl, token: 'tok-proxy-test', ca: readFileSync(pki.caFile, 'utf8'), retry: { maxAttempts: 1 }, env });

describe('outbound proxy from the environment', () => {
  it('the platform client tunnels through HTTPS_PROXY with CONNECT and still verifies the platform certificate', async () => {
    proxy = await startConnectProxy();
    const c = client({ HTTPS_PROXY: proxy.url });
    try {
      const res = await c.requestJson<{ totalResults: number }>('GET', '/scim/v2/Users', { route: 'scim_users' });
      expect(res.body?.totalResults).toBe(0);
    } finally {
      await c.close();
    }
    expect(proxy.targets).toEqual([`localhost:${new URL(targetUrl).port}`]);
    expect(seen).toEqual(['GET /scim/v2/Users']);
  });

  it('NO_PROXY sends a listed host direct, and lower-case variables take precedence', async () => {
    proxy = await startConnectProxy();
    const c = client({ https_proxy: proxy.url, HTTPS_PROXY: 'http://127.0.0.1:9', no_proxy: 'localhost' });
    try {
      await c.requestJson('GET', '/scim/v2/Users', { route: 'scim_users' });
    } finally {
      await c.close();
    }
    expect(proxy.targets).toEqual([]);
    expect(seen).toEqual(['GET /scim/v2/Users']);
    expect(proxyFromEnv({ https_proxy: 'http://a:1', HTTPS_PROXY: 'http://b:2', NO_PROXY: 'x' })).toEqual({
      httpsProxy: 'http://a:1',
      noProxy: 'x',
    });
  });

  it('an HTTP-based sink (splunk-hec) goes through the proxy too', async () => {
    proxy = await startConnectProxy();
    const saved = process.env['HTTPS_PROXY'];
    process.env['HTTPS_PROXY'] = proxy.url;
    try {
      const sink = await openSink({
        type: 'splunk-hec',
        name: 'hec',
        url: targetUrl,
        token: 'hec-token',
        tls: { caFile: pki.caFile },
        retry: { maxAttempts: 1 },
      });
      expect((await sink.write(makeEvents(2))).delivered).toBe(2);
      await sink.close();
    } finally {
      if (saved === undefined) delete process.env['HTTPS_PROXY'];
      else process.env['HTTPS_PROXY'] = saved;
    }
    expect(proxy.targets).toEqual([`localhost:${new URL(targetUrl).port}`]);
    expect(seen).toEqual(['POST /services/collector/event']);
  });

  it('the SCIM source goes through the proxy too', async () => {
    proxy = await startConnectProxy();
    const saved = process.env['HTTPS_PROXY'];
    process.env['HTTPS_PROXY'] = proxy.url;
    try {
      const config = scimSourceSchema.parse({
        type: 'scim',
        baseUrl: targetUrl,
        token: 'src-token',
        scimPath: '/scim/v2',
        groups: false,
        allowEmpty: true,
        caFile: pki.caFile,
      });
      const source = new ScimSource(config, {
        configDir: '/tmp',
        secrets: new Map([['caFile', new Secret(readFileSync(pki.caFile, 'utf8'), 'caFile')]]),
      });
      expect((await source.read()).users).toEqual([]);
    } finally {
      if (saved === undefined) delete process.env['HTTPS_PROXY'];
      else process.env['HTTPS_PROXY'] = saved;
    }
    expect(proxy.targets[0]).toBe(`localhost:${new URL(targetUrl).port}`);
    expect(seen.some((r) => r.startsWith('GET /scim/v2/Users'))).toBe(true);
  });

  it('a platform certificate the configured trust refuses fails at once (not retried), naming the host and the fix', async () => {
    const retries: string[] = [];
    const c = new PlatformClient({
      baseUrl: targetUrl,
      token: 't',
      retry: { maxAttempts: 6, baseDelayMs: 1, maxDelayMs: 1 },
      hooks: { onRetry: (e) => retries.push(e.reason) },
      env: {},
    });
    try {
      const err = (await c.requestJson('GET', '/x', { route: 'x', what: 'GET x' }).catch((e: unknown) => e)) as Error & { code: string };
      expect(err.code).toBe('E_CONFIG_INVALID');
      expect(err.message).toMatch(
        /^GET x: TLS verification of localhost:\d+ failed \((UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_GET_ISSUER_CERT_LOCALLY)\) for https:\/\/localhost:\d+\/x; trust its CA with platform\.caFile/,
      );
    } finally {
      await c.close();
    }
    expect(retries).toEqual([]);
  });

  it('a proxy that refuses the tunnel is a network failure naming the platform URL, not a hang', async () => {
    proxy = await startConnectProxy();
    const c = new PlatformClient({
      baseUrl: 'https://localhost:1',
      token: 't',
      retry: { maxAttempts: 1 },
      env: { HTTPS_PROXY: proxy.url },
    });
    try {
      await expect(c.requestJson('GET', '/x', { route: 'x', what: 'GET x' })).rejects.toThrow(/GET x: .*https:\/\/localhost:1\/x/);
    } finally {
      await c.close();
    }
  });
});
