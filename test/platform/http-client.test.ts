import { afterEach, describe, expect, it } from 'vitest';
import { AmbiguousRequestError, PlatformClient, type PlatformClientOptions } from '../../src/platform/http-client.ts';
import { AUTH_MESSAGES, ErrorCodes, SyncError } from '../../src/errors.ts';
import { resetConnection, sendJson, startTestServer, truncateJson, type Handler, type TestServer } from './helpers/http-server.ts';

const TOKEN = 'tok-SECRET-4f9a1c';

let server: TestServer | undefined;
let client: PlatformClient | undefined;

afterEach(async () => {
  await client?.close();
  await server?.close();
  client = undefined;
  server = undefined;
});

async function setup(
  handler: Handler,
  opts: Partial<PlatformClientOptions> = {},
): Promise<{ server: TestServer; client: PlatformClient; retries: { delayMs: number; reason: string }[] }> {
  server = await startTestServer(handler);
  const retries: { delayMs: number; reason: string }[] = [];
  client = new PlatformClient({
    baseUrl: server.url,
    token: TOKEN,
    allowInsecureHttp: true,
    retry: { maxAttempts: 4, baseDelayMs: 1, maxDelayMs: 5 },
    random: () => 0.5,
    hooks: { onRetry: (e) => retries.push({ delayMs: e.delayMs, reason: e.reason }) },
    ...opts,
  });
  return { server, client, retries };
}

async function failure(p: Promise<unknown>): Promise<SyncError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof SyncError) return e;
    throw new Error(`expected a SyncError, got ${String(e)}`);
  }
  throw new Error('expected the request to fail');
}

describe('PlatformClient retries', () => {
  it.each([503, 500, 502, 504, 429, 408])('retries HTTP %i and then succeeds', async (status) => {
    const { server, client, retries } = await setup((_req, res, n) =>
      n <= 2 ? sendJson(res, status, { detail: 'busy' }) : sendJson(res, 200, { ok: n }),
    );
    const res = await client.requestJson<{ ok: number }>('GET', '/x', { route: 'test' });
    expect(res.body).toEqual({ ok: 3 });
    expect(server.requests).toHaveLength(3);
    expect(retries.map((r) => r.reason)).toEqual([`HTTP ${status}`, `HTTP ${status}`]);
  });

  it('gives up after maxAttempts with a transient error carrying the status', async () => {
    const { server, client } = await setup((_req, res) => sendJson(res, 503, { detail: 'down' }), {
      retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 2 },
    });
    const err = await failure(client.requestJson('GET', '/x', { route: 'test', what: 'read thing' }));
    expect(err.code).toBe(ErrorCodes.TRANSIENT);
    expect(err.kind).toBe('transient');
    expect(err.status).toBe(503);
    expect(err.message).toContain('read thing');
    expect(server.requests).toHaveLength(3);
  });

  it('retries a GET after a connection reset and after a body cut mid-way', async () => {
    const { server, client, retries } = await setup((req, res, n) => {
      if (n === 1) return resetConnection(req);
      if (n === 2) return truncateJson(res);
      sendJson(res, 200, { ok: true });
    });
    const res = await client.requestJson('GET', '/x', { route: 'test' });
    expect(res.body).toEqual({ ok: true });
    expect(server.requests).toHaveLength(3);
    expect(retries).toHaveLength(2);
    expect(retries.every((r) => r.reason.startsWith('network error'))).toBe(true);
  });

  it.each([
    [400, ErrorCodes.REJECTED, 'rejected'],
    [404, ErrorCodes.NOT_FOUND, 'not_found'],
    [409, ErrorCodes.CONFLICT, 'conflict'],
    [422, ErrorCodes.REJECTED, 'rejected'],
    [501, ErrorCodes.UNSUPPORTED, 'rejected'],
    [405, ErrorCodes.UNSUPPORTED, 'rejected'],
  ] as const)('never retries HTTP %i (%s)', async (status, code, kind) => {
    const { server, client, retries } = await setup((_req, res) =>
      sendJson(res, status, { schemas: [], status: String(status), scimType: 'invalidValue', detail: 'nope' }),
    );
    const err = await failure(client.requestJson('PUT', '/x', { route: 'test', body: { a: 1 } }));
    expect(err.code).toBe(code);
    expect(err.kind).toBe(kind);
    expect(err.status).toBe(status);
    expect(err.detail).toBe('invalidValue: nope');
    expect(server.requests).toHaveLength(1);
    expect(retries).toHaveLength(0);
  });
});

describe('PlatformClient Retry-After and backoff', () => {
  it('honours Retry-After in seconds', async () => {
    const { server, client, retries } = await setup((_req, res, n) =>
      n === 1 ? sendJson(res, 503, {}, { 'retry-after': '1' }) : sendJson(res, 200, {}),
    );
    await client.requestJson('GET', '/x', { route: 'test' });
    const gap = server.requests[1]!.at - server.requests[0]!.at;
    expect(retries[0]!.delayMs).toBe(1000);
    expect(gap).toBeGreaterThanOrEqual(950);
    expect(gap).toBeLessThan(1900);
  });

  it('honours Retry-After as an HTTP-date', async () => {
    // Whole seconds, as HTTP-dates have no fractions: 1–2 s from now.
    const at = new Date(Math.ceil((Date.now() + 1000) / 1000) * 1000 + 500);
    const { server, client, retries } = await setup((_req, res, n) =>
      n === 1 ? sendJson(res, 429, {}, { 'retry-after': at.toUTCString() }) : sendJson(res, 200, {}),
    );
    await client.requestJson('GET', '/x', { route: 'test' });
    const gap = server.requests[1]!.at - server.requests[0]!.at;
    expect(retries[0]!.delayMs).toBeGreaterThanOrEqual(900);
    expect(retries[0]!.delayMs).toBeLessThanOrEqual(2600);
    expect(gap).toBeGreaterThanOrEqual(retries[0]!.delayMs - 50);
    expect(gap).toBeLessThan(3000);
  });

  it('uses capped exponential backoff with the injected jitter', async () => {
    const { client, retries } = await setup((_req, res, n) => (n <= 3 ? sendJson(res, 500, {}) : sendJson(res, 200, {})), {
      retry: { maxAttempts: 5, baseDelayMs: 40, maxDelayMs: 100 },
      random: () => 1,
    });
    await client.requestJson('GET', '/x', { route: 'test' });
    // ceilings 40, 80, min(160, 100); random 1 → the full ceiling.
    expect(retries.map((r) => r.delayMs)).toEqual([40, 80, 100]);
  });
});

describe('PlatformClient and non-idempotent requests', () => {
  it('does not blindly retry a POST after a reset: AmbiguousRequestError', async () => {
    const { server, client } = await setup((req) => resetConnection(req));
    const err = await failure(client.requestJson('POST', '/x', { route: 'test', body: { a: 1 }, what: 'create user a@example.com' }));
    expect(err).toBeInstanceOf(AmbiguousRequestError);
    expect(err.message).toContain('may have been processed');
    expect(server.requests).toHaveLength(1);
  });

  it('a POST that got 201 with a cut body is ambiguous, not retried', async () => {
    const { server, client } = await setup((_req, res) => truncateJson(res, 201));
    const err = await failure(client.requestJson('POST', '/x', { route: 'test', body: {} }));
    expect(err).toBeInstanceOf(AmbiguousRequestError);
    expect(server.requests).toHaveLength(1);
  });

  it('a POST answered 503 is ambiguous and not retried', async () => {
    const { server, client } = await setup((_req, res) => sendJson(res, 503, {}));
    const err = await failure(client.requestJson('POST', '/x', { route: 'test', body: {} }));
    expect(err).toBeInstanceOf(AmbiguousRequestError);
    expect(err.status).toBe(503);
    expect(server.requests).toHaveLength(1);
  });

  it('retries a POST after 429 (not processed)', async () => {
    const { server, client } = await setup((_req, res, n) =>
      n === 1 ? sendJson(res, 429, {}, { 'retry-after': '0' }) : sendJson(res, 201, { id: 'u1' }),
    );
    const res = await client.requestJson<{ id: string }>('POST', '/x', { route: 'test', body: {} });
    expect(res.status).toBe(201);
    expect(res.body?.id).toBe('u1');
    expect(server.requests).toHaveLength(2);
  });

  it('a POST still rate-limited after every attempt is a plain transient error, not ambiguous', async () => {
    const { server, client } = await setup((_req, res) => sendJson(res, 429, {}, { 'retry-after': '0' }), {
      retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 1 },
    });
    const err = await failure(client.requestJson('POST', '/x', { route: 'test', body: {} }));
    expect(err).not.toBeInstanceOf(AmbiguousRequestError);
    expect(err.code).toBe(ErrorCodes.TRANSIENT);
    expect(err.retryAfterSeconds).toBe(0);
    expect(server.requests).toHaveLength(2);
  });

  it('retries a POST whose connection was refused (never sent)', async () => {
    const dead = await startTestServer(() => undefined);
    const url = dead.url;
    await dead.close();
    const retries: string[] = [];
    client = new PlatformClient({
      baseUrl: url,
      token: TOKEN,
      allowInsecureHttp: true,
      retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 1 },
      hooks: { onRetry: (e) => retries.push(e.reason) },
    });
    const err = await failure(client.requestJson('POST', '/x', { route: 'test', body: {} }));
    expect(err).not.toBeInstanceOf(AmbiguousRequestError);
    expect(err.code).toBe(ErrorCodes.TRANSIENT);
    expect(retries).toEqual([`network error ECONNREFUSED at ${url}/x`, `network error ECONNREFUSED at ${url}/x`]);
    expect(err.message).toBe(`POST test: network error ECONNREFUSED at ${url}/x after 3 attempts`);
  });
});

describe('PlatformClient network failures name the host and URL', () => {
  it('a host that does not resolve (ENOTFOUND) fails at once, naming the host and the URL, without retries', async () => {
    const retries: string[] = [];
    client = new PlatformClient({
      baseUrl: 'https://scim.invalid/base',
      token: TOKEN,
      retry: { maxAttempts: 6, baseDelayMs: 1, maxDelayMs: 1 },
      hooks: { onRetry: (e) => retries.push(e.reason) },
    });
    const err = await failure(
      client.requestJson('GET', '/Users', { route: 'scim_users', what: 'GET Users', query: { filter: 'userName eq "ann"' } }),
    );
    expect(retries).toEqual([]);
    expect(err.code).toBe(ErrorCodes.TRANSIENT);
    expect(err.message).toBe(
      'GET Users: cannot resolve host scim.invalid (ENOTFOUND) for https://scim.invalid/base/Users; check the host name in platform.baseUrl and the DNS (or HTTPS_PROXY) of this machine',
    );
  });
});

describe('PlatformClient authentication', () => {
  it.each([
    [401, ErrorCodes.AUTH_INVALID, AUTH_MESSAGES[401]],
    [403, ErrorCodes.AUTH_FORBIDDEN, AUTH_MESSAGES[403]],
  ] as const)('HTTP %i → %s with the documented message and no token, even when the server echoes it', async (status, code, text) => {
    const { server, client } = await setup((req, res) =>
      sendJson(res, status, { detail: `bad credential ${String(req.headers.authorization)}`, error: TOKEN }, { 'x-echo': TOKEN }),
    );
    const err = await failure(client.requestJson('GET', '/x', { route: 'test', what: 'list users' }));
    expect(err.code).toBe(code);
    expect(err.kind).toBe('fatal');
    expect(err.message).toContain(text);
    expect(err.message).toContain('[redacted]');
    for (const s of [err.message, err.detail ?? '', JSON.stringify(err.toJSON()), String(err.stack)]) expect(s).not.toContain(TOKEN);
    expect(server.requests).toHaveLength(1);
  });

  it.each([
    ['Bearer', `Bearer ${TOKEN}`],
    ['Api-Key', `Api-Key ${TOKEN}`],
  ] as const)('sends the %s authorization header', async (scheme, expected) => {
    const { server, client } = await setup((_req, res) => sendJson(res, 200, {}), { authScheme: scheme });
    await client.requestJson('GET', '/x', { route: 'test' });
    expect(server.requests[0]!.headers.authorization).toBe(expected);
  });

  it('refuses an empty token or one with a line break', () => {
    for (const token of ['', 'abc\r\nx-injected: 1']) {
      expect(() => new PlatformClient({ baseUrl: 'https://platform.example.com', token })).toThrow(
        expect.objectContaining({ code: ErrorCodes.CONFIG_INVALID }),
      );
    }
  });
});

describe('PlatformClient response handling', () => {
  it('caps the buffered response size and does not retry', async () => {
    const { server, client } = await setup((_req, res) => sendJson(res, 200, { blob: 'x'.repeat(4096) }), { maxResponseBytes: 1024 });
    const err = await failure(client.requestJson('GET', '/x', { route: 'test' }));
    expect(err.code).toBe(ErrorCodes.RESPONSE_TOO_LARGE);
    expect(server.requests).toHaveLength(1);
  });

  it('a 200 that is not JSON is E_BAD_RESPONSE', async () => {
    const { client } = await setup((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html>login</html>');
    });
    const err = await failure(client.requestJson('GET', '/x', { route: 'test' }));
    expect(err.code).toBe(ErrorCodes.BAD_RESPONSE);
  });

  it('keeps the base URL path prefix and encodes the query', async () => {
    server = await startTestServer((_req, res) => sendJson(res, 200, {}));
    client = new PlatformClient({ baseUrl: `${server.url}/tenant-a/`, token: TOKEN, allowInsecureHttp: true });
    await client.requestJson('GET', '/api/scim/v2/Users', {
      route: 'test',
      query: { filter: 'userName eq "a b"', count: 5, skip: undefined },
    });
    expect(server.requests[0]!.url).toBe('/tenant-a/api/scim/v2/Users?filter=userName+eq+%22a+b%22&count=5');
  });
});

describe('PlatformClient HTTPS enforcement', () => {
  const make = (baseUrl: string, allowInsecureHttp?: boolean) => () =>
    new PlatformClient({ baseUrl, token: TOKEN, ...(allowInsecureHttp !== undefined ? { allowInsecureHttp } : {}) });
  const insecure = expect.objectContaining({ code: ErrorCodes.INSECURE_URL });

  it('accepts https://', async () => {
    const c = make('https://acme.platform.example.com')();
    expect(c.baseUrl.protocol).toBe('https:');
    await c.close();
  });

  it('refuses http:// without allowInsecureHttp, even on loopback', () => {
    expect(make('http://127.0.0.1:8080')).toThrow(insecure);
    expect(make('http://localhost:8080', false)).toThrow(insecure);
  });

  it('allows http:// with allowInsecureHttp only for loopback hosts', async () => {
    for (const url of ['http://127.0.0.1:8080', 'http://localhost:1', 'http://[::1]:8080', 'http://127.3.2.1']) {
      const c = make(url, true)();
      await c.close();
    }
    for (const url of ['http://acme.example.com', 'http://10.0.0.5:8080', 'http://127.0.0.1.evil.example']) {
      expect(make(url, true)).toThrow(insecure);
    }
  });

  it('refuses other schemes and garbage', () => {
    expect(make('ftp://example.com', true)).toThrow(insecure);
    expect(make('not a url', true)).toThrow(insecure);
  });
});
