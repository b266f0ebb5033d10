import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/index.ts';
import { newUser, scim } from './helpers.ts';

let sim: Simulator;
let ids: string[];

beforeAll(async () => {
  sim = await startSimulator({ seed: 3 });
});
afterAll(() => sim.close());
beforeEach(() => {
  sim.setFaults([]);
  sim.clearRequests();
  sim.store.clear();
  ids = Array.from({ length: 25 }, (_, i) => sim.store.createUser({ userName: `user${String(i).padStart(2, '0')}@example.com` }).id);
});

const USERS = '/api/scim/v2/Users';
const pageIds = (body: { Resources: Array<{ id: string }> }): string[] => body.Resources.map((r) => r.id);

describe('request-level faults', () => {
  it('status: answers 503 with Retry-After the given number of times, then recovers', async () => {
    sim.setFaults([{ kind: 'status', status: 503, retryAfterSeconds: 2, times: 2, pathPrefix: USERS }]);
    const a = await scim(sim.url, 'GET', '/Users');
    expect(a.status).toBe(503);
    expect(a.headers.get('retry-after')).toBe('2');
    expect(a.body).toMatchObject({ status: '503', schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'] });
    expect((await scim(sim.url, 'GET', '/Users')).status).toBe(503);
    expect((await scim(sim.url, 'GET', '/Users')).status).toBe(200);
    expect(sim.requests.map((r) => r.status)).toEqual([503, 503, 200]);
    expect(sim.requests[0]!.faults).toEqual(['status']);
  });

  it('status: 429 on the platform API uses the { error } shape', async () => {
    sim.setFaults([{ kind: 'status', status: 429, retryAfterSeconds: 1, pathPrefix: '/api/v1/audit-logs/export' }]);
    const res = await fetch(`${sim.url}/api/v1/audit-logs/export?start=2026-11-01&end=2026-11-01`, {
      headers: { authorization: 'Bearer test-token' },
    });
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(await res.json()).toEqual({ error: 'Too many requests' });
  });

  it('matches rules by method and by path prefix, including the /scim/v2 alias', async () => {
    sim.setFaults([{ kind: 'status', status: 500, method: 'post', pathPrefix: USERS }]);
    expect((await scim(sim.url, 'GET', '/Users')).status).toBe(200);
    const viaAlias = await fetch(`${sim.url}/scim/v2/Users`, {
      method: 'POST',
      headers: { authorization: 'Bearer test-token' },
      body: JSON.stringify(newUser('x@example.com')),
    });
    expect(viaAlias.status).toBe(500);
    expect(
      (await scim(sim.url, 'POST', '/Groups', { schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'], displayName: 'G' })).status,
    ).toBe(201);
  });

  it('rate: 0 never fires, 0.5 fires on a seeded share of requests', async () => {
    sim.setFaults([{ kind: 'status', status: 503, rate: 0 }]);
    for (let i = 0; i < 5; i++) expect((await scim(sim.url, 'GET', '/Users?count=1')).status).toBe(200);
    sim.setFaults([{ kind: 'status', status: 503, rate: 0.5 }]);
    let failed = 0;
    for (let i = 0; i < 60; i++) if ((await scim(sim.url, 'GET', '/Users?count=1')).status === 503) failed++;
    expect(failed).toBeGreaterThan(10);
    expect(failed).toBeLessThan(50);
  });

  it('reset: destroys the socket before doing anything', async () => {
    sim.setFaults([{ kind: 'reset', method: 'POST', times: 1 }]);
    await expect(scim(sim.url, 'POST', '/Users', newUser('lost@example.com'))).rejects.toThrow();
    expect(sim.store.getUserByUserName('lost@example.com')).toBeUndefined();
    expect(sim.requests.at(-1)).toMatchObject({ method: 'POST', status: 0, faults: ['reset'] });
    expect((await scim(sim.url, 'POST', '/Users', newUser('lost@example.com'))).status).toBe(201);
  });

  it('reset-after-commit: performs the create, then cuts the connection (ambiguous POST)', async () => {
    sim.setFaults([{ kind: 'reset-after-commit', method: 'POST', pathPrefix: USERS, times: 1 }]);
    await expect(scim(sim.url, 'POST', '/Users', newUser('ghost@example.com'))).rejects.toThrow();
    expect(sim.store.getUserByUserName('ghost@example.com')).toBeDefined();
    const retry = await scim(sim.url, 'POST', '/Users', newUser('ghost@example.com'));
    expect(retry.status).toBe(409);
  });

  it('latency: delays the response by at least latencyMs', async () => {
    sim.setFaults([{ kind: 'latency', latencyMs: 150, jitterMs: 20 }]);
    const t0 = performance.now();
    expect((await scim(sim.url, 'GET', '/Users?count=1')).status).toBe(200);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(145);
  });

  it('truncate: sends part of a JSON body and cuts the connection', async () => {
    sim.setFaults([{ kind: 'truncate', afterBytes: 100, times: 1 }]);
    const res = await fetch(`${sim.url}${USERS}`, { headers: { authorization: 'Bearer test-token' } });
    expect(res.status).toBe(200);
    await expect(res.text()).rejects.toThrow();
    expect(sim.requests.at(-1)?.faults).toEqual(['truncate']);
  });

  it('drip: delivers the whole body in small delayed pieces', async () => {
    sim.setFaults([{ kind: 'drip', chunkBytes: 200, delayMs: 25 }]);
    const t0 = performance.now();
    const res = await fetch(`${sim.url}${USERS}?count=10`, { headers: { authorization: 'Bearer test-token' } });
    let pieces = 0;
    let text = '';
    const decoder = new TextDecoder();
    for await (const chunk of res.body!) {
      pieces++;
      text += decoder.decode(chunk, { stream: true });
    }
    const body = JSON.parse(text) as { Resources: unknown[] };
    expect(body.Resources).toHaveLength(10);
    expect(pieces).toBeGreaterThan(2);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(25 * Math.floor(text.length / 200) - 5);
  });
});

describe('paging faults', () => {
  it('capped-page: returns fewer than asked and says so', async () => {
    sim.setFaults([{ kind: 'capped-page', pageSize: 3 }]);
    const r = await scim(sim.url, 'GET', '/Users?count=10');
    expect(r.body).toMatchObject({ totalResults: 25, itemsPerPage: 3 });
    expect(pageIds(r.body)).toEqual(ids.slice(0, 3));
  });

  it('lying-page: returns fewer than asked while itemsPerPage claims the requested count', async () => {
    sim.setFaults([{ kind: 'lying-page', pageSize: 4 }]);
    const r = await scim(sim.url, 'GET', '/Users?startIndex=5&count=10');
    expect(r.body).toMatchObject({ totalResults: 25, itemsPerPage: 10, startIndex: 5 });
    expect(pageIds(r.body)).toEqual(ids.slice(4, 8));
  });

  it('changing-total: totalResults moves during the listing', async () => {
    sim.setFaults([{ kind: 'changing-total', totalDelta: 3, times: 1 }]);
    expect((await scim(sim.url, 'GET', '/Users?count=10')).body.totalResults).toBe(28);
    expect((await scim(sim.url, 'GET', '/Users?startIndex=11&count=10')).body.totalResults).toBe(25);
  });

  it('duplicate-across-pages (shift): the page starts one early, repeating the last resource', async () => {
    sim.setFaults([{ kind: 'duplicate-across-pages' }]);
    const p1 = await scim(sim.url, 'GET', '/Users?count=10');
    const p2 = await scim(sim.url, 'GET', '/Users?startIndex=11&count=10');
    expect(pageIds(p1.body)).toEqual(ids.slice(0, 10)); // first page cannot repeat anything
    expect(pageIds(p2.body)).toEqual(ids.slice(9, 19));
    expect(pageIds(p2.body)[0]).toBe(pageIds(p1.body)[9]);
  });

  it("duplicate-across-pages (extra): the previous page's last resource is prepended", async () => {
    sim.setFaults([{ kind: 'duplicate-across-pages', duplicateMode: 'extra' }]);
    const p2 = await scim(sim.url, 'GET', '/Users?startIndex=11&count=10');
    expect(pageIds(p2.body)).toEqual([ids[9], ...ids.slice(10, 20)]);
  });

  it('empty-page: an empty page before totalResults is reached', async () => {
    sim.setFaults([{ kind: 'empty-page', times: 1 }]);
    const r = await scim(sim.url, 'GET', '/Users?startIndex=11&count=10');
    expect(r.body).toMatchObject({ totalResults: 25, itemsPerPage: 0, Resources: [] });
    expect(pageIds((await scim(sim.url, 'GET', '/Users?startIndex=11&count=10')).body)).toEqual(ids.slice(10, 20));
  });

  it('mutate-between-pages (delete): the first resource disappears after the page is served', async () => {
    sim.setFaults([{ kind: 'mutate-between-pages', times: 1 }]);
    const p1 = await scim(sim.url, 'GET', '/Users?count=10');
    expect(pageIds(p1.body)).toEqual(ids.slice(0, 10));
    expect(sim.store.getUser(ids[0]!)).toBeUndefined();
    const p2 = await scim(sim.url, 'GET', '/Users?startIndex=11&count=10');
    expect(p2.body.totalResults).toBe(24);
    expect(pageIds(p2.body)).toEqual(ids.slice(11, 21)); // ids[10] is skipped by an offset client
  });

  it('mutate-between-pages (insert): a new resource appears at the front', async () => {
    sim.setFaults([{ kind: 'mutate-between-pages', mutation: 'insert', times: 1 }]);
    await scim(sim.url, 'GET', '/Users?count=10');
    const p2 = await scim(sim.url, 'GET', '/Users?startIndex=11&count=10');
    expect(p2.body.totalResults).toBe(26);
    expect(pageIds(p2.body)).toEqual(ids.slice(9, 19)); // ids[9] is seen twice
    expect(sim.store.users()[0]!.userName).toMatch(/^drift-/);
  });

  it('list faults ignore non-list requests and do not spend their budget there', async () => {
    sim.setFaults([{ kind: 'empty-page', times: 1 }]);
    expect((await scim(sim.url, 'GET', `/Users/${ids[0]}`)).status).toBe(200);
    expect((await scim(sim.url, 'GET', '/Users?count=5')).body.Resources).toEqual([]);
    expect((await scim(sim.url, 'GET', '/Users?count=5')).body.Resources).toHaveLength(5);
  });

  it('faults from options apply from the first request', async () => {
    const s = await startSimulator({ faults: [{ kind: 'status', status: 502, times: 1 }] });
    try {
      expect((await scim(s.url, 'GET', '/Users')).status).toBe(502);
      expect((await scim(s.url, 'GET', '/Users')).status).toBe(200);
    } finally {
      await s.close();
    }
  });
});
