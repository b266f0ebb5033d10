import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/index.ts';
import { scim } from './helpers.ts';

let sim: Simulator;

beforeAll(async () => {
  sim = await startSimulator({ users: 250, maxPageSize: 40 });
});
afterAll(() => sim.close());

describe('paging', () => {
  it('caps count at maxPageSize and defaults to it', async () => {
    const r = await scim(sim.url, 'GET', '/Users?count=1000');
    expect(r.body).toMatchObject({ totalResults: 250, startIndex: 1, itemsPerPage: 40 });
    expect(r.body.Resources).toHaveLength(40);
    expect((await scim(sim.url, 'GET', '/Users')).body.Resources).toHaveLength(40);
  });

  it('returns only totalResults for count=0', async () => {
    const r = await scim(sim.url, 'GET', '/Users?count=0');
    expect(r.body).toMatchObject({ totalResults: 250, itemsPerPage: 0, Resources: [] });
  });

  it('walks every user exactly once in a stable order', async () => {
    const seen: string[] = [];
    for (let start = 1; ; ) {
      const r = await scim(sim.url, 'GET', `/Users?startIndex=${start}&count=33`);
      expect(r.body.totalResults).toBe(250);
      if (r.body.Resources.length === 0) break;
      seen.push(...r.body.Resources.map((u: { id: string }) => u.id));
      start += r.body.Resources.length;
    }
    expect(seen).toEqual(sim.store.users().map((u) => u.id));
  });

  it('clamps startIndex < 1 and returns an empty page past the end', async () => {
    expect((await scim(sim.url, 'GET', '/Users?startIndex=0&count=1')).body.Resources[0].id).toBe(sim.store.users()[0]!.id);
    const past = await scim(sim.url, 'GET', '/Users?startIndex=251&count=10');
    expect(past.body).toMatchObject({ totalResults: 250, startIndex: 251, itemsPerPage: 0, Resources: [] });
  });

  it('advertises the cap in ServiceProviderConfig', async () => {
    const spc = await scim(sim.url, 'GET', '/ServiceProviderConfig');
    expect(spc.body).toMatchObject({
      patch: { supported: true },
      filter: { supported: true, maxResults: 40 },
      bulk: { supported: false },
      etag: { supported: true },
    });
    expect((await scim(sim.url, 'GET', '/ResourceTypes')).body.totalResults).toBe(2);
    expect((await scim(sim.url, 'GET', '/Schemas/urn:ietf:params:scim:schemas:core:2.0:User')).body.name).toBe('User');
  });

  it('pages filtered results after an index lookup', async () => {
    const names = sim.store
      .users()
      .slice(0, 3)
      .map((u) => u.userName);
    const filter = encodeURIComponent(names.map((n) => `userName eq "${n.toUpperCase()}"`).join(' or '));
    const r = await scim(sim.url, 'GET', `/Users?filter=${filter}&startIndex=2&count=1`);
    expect(r.body.totalResults).toBe(3);
    expect(r.body.Resources.map((u: { userName: string }) => u.userName)).toEqual([names[1]]);
  });
});

describe('a 30,000-user listing', () => {
  it('serves deep pages without rescanning (seeded in-process)', async () => {
    const big = await startSimulator({ users: 30_000, maxPageSize: 100 });
    try {
      expect(big.store.counts().users).toBe(30_000);
      const last = await scim(big.url, 'GET', '/Users?startIndex=29951&count=100');
      expect(last.body.Resources).toHaveLength(50);
      expect(last.body.Resources[49].id).toBe(big.store.users()[29_999]!.id);
      const one = big.store.users()[27_777]!;
      const hit = await scim(big.url, 'GET', `/Users?filter=${encodeURIComponent(`userName eq "${one.userName}"`)}`);
      expect(hit.body.Resources.map((u: { id: string }) => u.id)).toEqual([one.id]);
    } finally {
      await big.close();
    }
  });
});
