import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCodes, SyncError } from '../../src/errors.ts';
import { PlatformClient } from '../../src/platform/http-client.ts';
import { ScimClient } from '../../src/platform/scim/client.ts';
import { eqFilter } from '../../src/platform/scim/filter.ts';
import type { FaultRule } from '../../src/simulator/index.ts';
import { requestsTo, scimHarness, seedUsers, sortedIds, type ScimHarness } from './helpers/scim.ts';
import { sendJson, startTestServer, type TestServer } from './helpers/http-server.ts';
import { rejection } from '../helpers/rejection.ts';

let h: ScimHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const USERS = '/api/scim/v2/Users';

async function listing(
  faults: FaultRule[],
  simOpts: Parameters<typeof scimHarness>[0] = {},
  clientOpts: Parameters<typeof scimHarness>[1] = {},
) {
  h = await scimHarness({ maxPageSize: 7, ...simOpts }, { discover: false, pageSize: 7, ...clientOpts });
  seedUsers(h.sim, 100);
  h.sim.clearRequests();
  h.sim.setFaults(faults);
  return h;
}

function startIndexes(hh: ScimHarness): number[] {
  return requestsTo(hh.sim, 'GET', '/Users').map((r) => Number(r.query['startIndex']));
}

describe('ScimClient.listAll paging', () => {
  it('reads 100 users through a server-side page cap of 7, page size learned from the SPC', async () => {
    h = await scimHarness({ maxPageSize: 7 }, { pageSize: 50 });
    seedUsers(h.sim, 100);
    h.sim.clearRequests();
    let fresh = 0;
    const users = await h.scim.listAll('Users', { onPage: (n) => (fresh += n) });
    expect(sortedIds(users)).toEqual(sortedIds(h.sim.store.users()));
    expect(fresh).toBe(100);
    const pages = requestsTo(h.sim, 'GET', '/Users');
    // The first page of 7, 16 pages overlapping the previous one by one (6 new each), and the
    // last resource alone, which proves the end and that the last page did not shift.
    expect(pages).toHaveLength(18);
    expect(pages.every((r) => r.query['count'] === '7')).toBe(true);
    expect(requestsTo(h.sim, 'GET', '/ServiceProviderConfig')).toHaveLength(1);
  });

  it('advances by what it received when the server silently caps a larger count', async () => {
    h = await scimHarness({ maxPageSize: 7 }, { pageSize: 50, discover: false });
    seedUsers(h.sim, 100);
    h.sim.clearRequests();
    const users = await h.scim.listUsers();
    expect(users).toHaveLength(100);
    // Each page starts at the previous page's last resource (the overlap).
    expect(startIndexes(h).slice(0, 4)).toEqual([1, 7, 13, 19]);
  });

  it('ignores a lying itemsPerPage', async () => {
    const hh = await listing([{ kind: 'lying-page', pageSize: 3 }]);
    const users = await hh.scim.listUsers();
    expect(sortedIds(users)).toEqual(sortedIds(hh.sim.store.users()));
    expect(startIndexes(hh).slice(0, 3)).toEqual([1, 3, 5]);
  });

  it('keeps going while totalResults moves during the listing', async () => {
    const hh = await listing([{ kind: 'changing-total', totalDelta: 5, times: 4 }]);
    const users = await hh.scim.listUsers();
    expect(sortedIds(users)).toEqual(sortedIds(hh.sim.store.users()));
  });

  it('reads everything when totalResults under-reports', async () => {
    const hh = await listing([{ kind: 'changing-total', totalDelta: -60 }]);
    expect(await hh.scim.listUsers()).toHaveLength(100);
  });

  it('refuses to return a list shorter than a totalResults that never comes down', async () => {
    const hh = await listing([{ kind: 'changing-total', totalDelta: 3 }]);
    const err = await rejection(hh.scim.listUsers());
    expect(err.code).toBe(ErrorCodes.BAD_RESPONSE);
    expect(err.message).toContain('listing incomplete');
  });

  it('de-duplicates a resource repeated across pages', async () => {
    const hh = await listing([{ kind: 'duplicate-across-pages', duplicateMode: 'extra' }]);
    const users = await hh.scim.listUsers();
    expect(users).toHaveLength(100);
    expect(sortedIds(users)).toEqual(sortedIds(hh.sim.store.users()));
  });

  it('repairs a shifted page (one repeated, one skipped) with a verification pass', async () => {
    const hh = await listing([]);
    let pages = 0;
    // Arm the fault after page 1 so it hits page 2 (a shift needs startIndex > 1).
    const onPage = () => {
      if (++pages === 1) hh.sim.setFaults([{ kind: 'duplicate-across-pages', duplicateMode: 'shift', times: 1 }]);
    };
    const users = await hh.scim.listAll('Users', { onPage });
    expect(hh.sim.requests.filter((r) => r.faults?.includes('duplicate-across-pages'))).toHaveLength(1);
    expect(sortedIds(users)).toEqual(sortedIds(hh.sim.store.users()));
    expect(startIndexes(hh).filter((s) => s === 1)).toHaveLength(2);
  });

  it('never returns a short list when pages shift at random: the overlap re-aligns every one', async () => {
    const outcomes: string[] = [];
    for (const seed of [1, 2, 3, 4, 5, 6]) {
      const hh = await listing([{ kind: 'duplicate-across-pages', duplicateMode: 'shift', rate: 0.08 }], { seed });
      try {
        const users = await hh.scim.listUsers();
        expect(sortedIds(users)).toEqual(sortedIds(hh.sim.store.users()));
        outcomes.push('complete');
      } catch (e) {
        expect(e).toBeInstanceOf(SyncError);
        expect((e as SyncError).code).toBe(ErrorCodes.BAD_RESPONSE);
        expect((e as SyncError).message).toContain('listing incomplete');
        outcomes.push('refused');
      } finally {
        await hh.close();
        h = undefined;
      }
    }
    // Deterministic for these seeds: the shifts fired, and a short list never came back.
    expect(outcomes).toEqual(['complete', 'complete', 'complete', 'complete', 'complete', 'complete']);
  });

  it('re-probes an empty page before totalResults and recovers', async () => {
    const hh = await listing([{ kind: 'empty-page', times: 2 }]);
    const users = await hh.scim.listUsers();
    expect(sortedIds(users)).toEqual(sortedIds(hh.sim.store.users()));
    expect(startIndexes(hh).slice(0, 3)).toEqual([1, 1, 1]);
  });

  it('recovers from empty pages at random offsets', async () => {
    const hh = await listing([{ kind: 'empty-page', rate: 0.25 }]);
    const users = await hh.scim.listUsers();
    expect(sortedIds(users)).toEqual(sortedIds(hh.sim.store.users()));
    expect(hh.sim.requests.some((r) => r.faults?.includes('empty-page'))).toBe(true);
  });

  it('an empty page that stays empty is an explicit error, never a short list', async () => {
    const hh = await listing([{ kind: 'empty-page' }]);
    const err = await rejection(hh.scim.listUsers());
    expect(err.code).toBe(ErrorCodes.BAD_RESPONSE);
    expect(err.message).toMatch(/listing incomplete.*startIndex 1 stayed empty after 3 requests/);
    expect(requestsTo(hh.sim, 'GET', '/Users')).toHaveLength(3);
  });

  it('sees a user inserted at the front between pages (verification pass)', async () => {
    const hh = await listing([{ kind: 'mutate-between-pages', mutation: 'insert', times: 1 }]);
    const users = await hh.scim.listUsers();
    expect(hh.sim.store.users()).toHaveLength(101);
    expect(sortedIds(users)).toEqual(sortedIds(hh.sim.store.users()));
  });

  it('does not skip survivors when a user is deleted between pages', async () => {
    const hh = await listing([{ kind: 'mutate-between-pages', mutation: 'delete', times: 1 }]);
    const users = await hh.scim.listUsers();
    expect(hh.sim.store.users()).toHaveLength(99);
    expect(sortedIds(users)).toEqual(sortedIds(hh.sim.store.users()));
  });

  it('flags a collection that never holds still', async () => {
    const hh = await listing([{ kind: 'mutate-between-pages', mutation: 'delete' }]);
    const err = await rejection(hh.scim.listUsers());
    expect(err.code).toBe(ErrorCodes.BAD_RESPONSE);
    expect(err.message).toContain('kept changing');
  });

  it('leaver missed between pages: one deleted at the front and one created at the end (same totalResults) is caught and re-read', async () => {
    const hh = await listing([]);
    const before = hh.sim.store.users();
    // After page 1: the first user leaves, a new one joins at the end; every later offset moves back by one.
    hh.sim.setFaults([{ kind: 'mutate-between-pages', mutation: 'churn', times: 1 }]);
    const users = await hh.scim.listUsers();
    const live = hh.sim.store.users();
    expect(live).toHaveLength(100);
    // Exactly the live users: the one that moved back into an offset already read is there,
    // the deleted one is not (the suspect pass was followed by a clean verification pass).
    expect(sortedIds(users)).toEqual(sortedIds(live));
    expect(users.some((u) => u.id === before[0]!.id)).toBe(false);
    expect(startIndexes(hh).filter((s) => s === 1)).toHaveLength(2);
  });

  it('churn on every page is refused with an explicit error, never a short list', async () => {
    const hh = await listing([{ kind: 'mutate-between-pages', mutation: 'churn' }]);
    const err = await rejection(hh.scim.listUsers());
    expect(err.code).toBe(ErrorCodes.BAD_RESPONSE);
    expect(err.message).toContain('pages shifted');
  });

  it('repeat-first-page (scimmy): stops cleanly once totalResults unique ids are read', async () => {
    for (const n of [0, 1, 7, 14, 100]) {
      h = await scimHarness({ maxPageSize: 7, quirks: ['repeat-first-page'] }, { discover: false, pageSize: 7 });
      seedUsers(h.sim, n);
      const users = await h.scim.listUsers();
      expect(sortedIds(users)).toEqual(sortedIds(h.sim.store.users()));
      await h.close();
      h = undefined;
    }
  });

  it('repeat-first-page with a page size of one (no overlap possible) and a user deleted mid-listing', async () => {
    h = await scimHarness({ maxPageSize: 1, quirks: ['repeat-first-page'] }, { discover: false, pageSize: 1 });
    seedUsers(h.sim, 5);
    h.sim.setFaults([{ kind: 'mutate-between-pages', mutation: 'delete', times: 1 }]);
    const users = await h.scim.listUsers();
    expect(sortedIds(users)).toEqual(sortedIds(h.sim.store.users()));
    expect(users).toHaveLength(4);
  });

  it('lists an empty collection with one request', async () => {
    h = await scimHarness({}, { discover: false });
    expect(await h.scim.listGroups()).toEqual([]);
    expect(requestsTo(h.sim, 'GET', '/Groups')).toHaveLength(1);
  });

  it('passes filter and excludedAttributes, and lists groups with members', async () => {
    h = await scimHarness({}, { discover: false });
    const [a, b] = seedUsers(h.sim, 2);
    h.sim.store.createGroup({ displayName: 'Eng', members: [{ value: a!.id }, { value: b!.id }] });
    h.sim.store.createGroup({ displayName: 'Ops' });
    const groups = await h.scim.listGroups();
    expect(
      groups
        .find((g) => g.displayName === 'Eng')
        ?.members?.map((m) => m.value)
        .sort(),
    ).toEqual([a!.id, b!.id].sort());
    const slim = await h.scim.listAll('Groups', { excludedAttributes: ['members'], filter: eqFilter('displayName', 'Eng') });
    expect(slim).toHaveLength(1);
    expect(slim[0]!.members).toBeUndefined();
    const last = requestsTo(h.sim, 'GET', '/Groups').at(-1)!;
    expect(last.query).toMatchObject({ excludedAttributes: 'members', filter: 'displayName eq "Eng"' });
  });

  it('survives transient 503s on list pages', async () => {
    const hh = await listing([{ kind: 'status', status: 503, pathPrefix: USERS, rate: 0.3 }]);
    expect(await hh.scim.listUsers()).toHaveLength(100);
    expect(hh.sim.requests.some((r) => r.status === 503)).toBe(true);
  });
});

describe('ScimClient.listAll against a server that ignores startIndex', () => {
  let server: TestServer | undefined;
  let http: PlatformClient | undefined;
  afterEach(async () => {
    await http?.close();
    await server?.close();
  });

  it('stops with an error instead of looping', async () => {
    const resources = Array.from({ length: 5 }, (_, i) => ({ schemas: [], id: `u${i}`, userName: `u${i}` }));
    server = await startTestServer((_req, res) => sendJson(res, 200, { schemas: [], totalResults: 1000, Resources: resources }));
    http = new PlatformClient({ baseUrl: server.url, token: 't', allowInsecureHttp: true });
    const scim = new ScimClient(http, {
      scimPath: '/scim/v2/',
      pageSize: 5,
      maxMembersPerPatch: 10,
      memberRemoveDialect: 'filter',
      updateMethod: 'auto',
      discover: false,
    });
    const err = await rejection(scim.listUsers());
    expect(err.code).toBe(ErrorCodes.BAD_RESPONSE);
    expect(err.message).toContain('ignore startIndex');
    expect(server.requests).toHaveLength(4);
    expect(server.requests[0]!.url).toBe('/scim/v2/Users?startIndex=1&count=5');
  });

  it('refuses a page holding a resource without an id', async () => {
    server = await startTestServer((_req, res) => sendJson(res, 200, { totalResults: 2, resources: [{ id: 'a' }, { userName: 'no-id' }] }));
    http = new PlatformClient({ baseUrl: server.url, token: 't', allowInsecureHttp: true });
    const scim = new ScimClient(http, {
      scimPath: '/scim/v2',
      pageSize: 5,
      maxMembersPerPatch: 10,
      memberRemoveDialect: 'filter',
      updateMethod: 'auto',
      discover: false,
    });
    const err = await rejection(scim.listUsers());
    expect(err.code).toBe(ErrorCodes.BAD_RESPONSE);
    expect(err.message).toContain('has no id');
  });
});
