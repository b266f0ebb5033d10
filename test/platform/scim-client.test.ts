import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCodes } from '../../src/errors.ts';
import { PlatformClient } from '../../src/platform/http-client.ts';
import { ScimClient } from '../../src/platform/scim/client.ts';
import { SCHEMA_ENTERPRISE_USER, SCHEMA_GROUP, SCHEMA_USER, type ScimUser } from '../../src/platform/scim/types.ts';
import { parseFilter } from '../../src/platform/scim/filter.ts';
import { requestsTo, scimHarness, seedUsers, SCIM_PATH, type ScimHarness } from './helpers/scim.ts';
import { sendJson, startTestServer, type TestServer } from './helpers/http-server.ts';
import { rejection } from '../helpers/rejection.ts';

let h: ScimHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const NASTY = 'o"brien\\x@example.com';

describe('ScimClient lookups', () => {
  it('escapes filter values: a userName with " and \\ is found', async () => {
    h = await scimHarness();
    const stored = h.sim.store.createUser({ userName: NASTY });
    h.sim.store.createUser({ userName: 'o"brien@example.com' });
    const found = await h.scim.findUser({ userName: NASTY });
    expect(found?.id).toBe(stored.id);
    const lookup = requestsTo(h.sim, 'GET', '/Users').at(-1)!;
    expect(lookup.query['filter']).toBe('userName eq "o\\"brien\\\\x@example.com"');
  });

  it('matches userName case-insensitively and externalId exactly, externalId first', async () => {
    h = await scimHarness();
    const alice = h.sim.store.createUser({ userName: 'Alice.Smith@Example.com', externalId: 'EXT-1' });
    const other = h.sim.store.createUser({ userName: 'someone@example.com', externalId: 'ext-2' });
    expect((await h.scim.findUser({ userName: 'alice.smith@EXAMPLE.COM' }))?.id).toBe(alice.id);
    expect((await h.scim.findUser({ externalId: 'ext-2', userName: 'alice.smith@example.com' }))?.id).toBe(other.id);
    // 'ext-1' is not 'EXT-1' (externalId is case-exact): the userName decides.
    expect(await h.scim.findUser({ externalId: 'ext-1', userName: 'nobody@example.com' })).toBeUndefined();
    expect((await h.scim.findUser({ externalId: 'ext-1', userName: 'ALICE.smith@example.com' }))?.id).toBe(alice.id);
  });

  it('finds groups by externalId or displayName, with members', async () => {
    h = await scimHarness();
    const [u] = seedUsers(h.sim, 1);
    const g = h.sim.store.createGroup({ displayName: 'Data Engineers', externalId: 'g-ext', members: [{ value: u!.id }] });
    const byName = await h.scim.findGroup({ displayName: 'data engineers' });
    expect(byName?.id).toBe(g.id);
    expect(byName?.members?.map((m) => m.value)).toEqual([u!.id]);
    expect((await h.scim.findGroup({ externalId: 'g-ext' }))?.id).toBe(g.id);
    expect(await h.scim.findGroup({ externalId: 'nope', displayName: 'nope' })).toBeUndefined();
  });

  it('get returns undefined on 404; delete treats 404 as done', async () => {
    h = await scimHarness();
    const [u] = seedUsers(h.sim, 1);
    expect((await h.scim.get<ScimUser>('Users', u!.id))?.userName).toBe(u!.userName);
    await h.scim.delete('Users', u!.id);
    expect(h.sim.store.getUser(u!.id)).toBeUndefined();
    expect(await h.scim.get('Users', u!.id)).toBeUndefined();
    await h.scim.delete('Users', u!.id);
    expect(requestsTo(h.sim, 'DELETE', u!.id).map((r) => r.status)).toEqual([204, 404]);
  });

  it('getUser/getGroup re-read one object by id and say undefined once it is gone (404)', async () => {
    h = await scimHarness();
    const [u] = seedUsers(h.sim, 1);
    const g = h.sim.store.createGroup({ displayName: 'Eng', members: [{ value: u!.id }] });
    expect((await h.scim.getUser(u!.id))?.userName).toBe(u!.userName);
    expect((await h.scim.getGroup(g.id))?.members?.map((m) => m.value)).toEqual([u!.id]);
    h.sim.store.deleteGroup(g.id);
    h.sim.store.deleteUser(u!.id);
    expect(await h.scim.getUser(u!.id)).toBeUndefined();
    expect(await h.scim.getGroup(g.id)).toBeUndefined();
    expect(requestsTo(h.sim, 'GET', u!.id).map((r) => r.status)).toEqual([200, 404]);
  });
});

describe('ScimClient safe create', () => {
  it('creates a user', async () => {
    h = await scimHarness();
    const res = await h.scim.createUser({ schemas: [SCHEMA_USER], userName: 'new@example.com', externalId: 'e-new', active: true });
    expect(res.adopted).toBe(false);
    expect(h.sim.store.getUser(res.resource.id)?.userName).toBe('new@example.com');
  });

  it('409 → looks the user up and adopts it', async () => {
    h = await scimHarness();
    const existing = h.sim.store.createUser({ userName: 'Bob@Example.com' });
    const res = await h.scim.createUser({ schemas: [SCHEMA_USER], userName: 'bob@example.com', externalId: 'e-bob' });
    expect(res).toMatchObject({ adopted: true, via: 'conflict' });
    expect(res.resource.id).toBe(existing.id);
    expect(h.sim.store.users()).toHaveLength(1);
    expect(requestsTo(h.sim, 'POST', '/Users').map((r) => r.status)).toEqual([409]);
  });

  it('reset after commit on POST → lookup → adopt, never a duplicate', async () => {
    h = await scimHarness({ faults: [{ kind: 'reset-after-commit', method: 'POST', pathPrefix: `${SCIM_PATH}/Users`, times: 1 }] });
    const res = await h.scim.createUser({ schemas: [SCHEMA_USER], userName: 'carol@example.com', externalId: 'e-carol' });
    expect(res).toMatchObject({ adopted: true, via: 'ambiguous' });
    const stored = h.sim.store.users().filter((u) => u.userName === 'carol@example.com');
    expect(stored).toHaveLength(1);
    expect(res.resource.id).toBe(stored[0]!.id);
    expect(requestsTo(h.sim, 'POST', '/Users')).toHaveLength(1);
  });

  it('reset before the server acted → lookup finds nothing → POST again', async () => {
    h = await scimHarness({ faults: [{ kind: 'reset', method: 'POST', pathPrefix: `${SCIM_PATH}/Users`, times: 1 }] });
    const res = await h.scim.createUser({ schemas: [SCHEMA_USER], userName: 'dave@example.com' });
    expect(res.adopted).toBe(false);
    expect(h.sim.store.users()).toHaveLength(1);
    expect(requestsTo(h.sim, 'POST', '/Users')).toHaveLength(2);
  });

  it('gives up after a bounded number of ambiguous POSTs', async () => {
    h = await scimHarness({ faults: [{ kind: 'status', status: 503, method: 'POST' }] }, { maxCreateAttempts: 2 });
    const err = await rejection(h.scim.createUser({ schemas: [SCHEMA_USER], userName: 'erin@example.com' }));
    expect(err.code).toBe(ErrorCodes.TRANSIENT);
    expect(err.message).toContain('create user erin@example.com');
    expect(requestsTo(h.sim, 'POST', '/Users')).toHaveLength(2);
    expect(h.sim.store.users()).toHaveLength(0);
  });

  it('creates a group, and adopts an existing one on 409', async () => {
    h = await scimHarness();
    const [u] = seedUsers(h.sim, 1);
    const created = await h.scim.createGroup({ schemas: [SCHEMA_GROUP], displayName: 'Admins', members: [{ value: u!.id }] });
    expect(created.adopted).toBe(false);
    const again = await h.scim.createGroup({ schemas: [SCHEMA_GROUP], displayName: 'ADMINS' });
    expect(again).toMatchObject({ adopted: true, via: 'conflict' });
    expect(again.resource.id).toBe(created.resource.id);
    expect(h.sim.store.groups()).toHaveLength(1);
  });
});

describe('ScimClient updates', () => {
  const ops = [
    { op: 'replace' as const, path: 'active', value: false },
    { op: 'replace' as const, path: 'name.givenName', value: 'Frances' },
    { op: 'add' as const, path: `${SCHEMA_ENTERPRISE_USER}:department`, value: 'Finance' },
  ];

  function expectPatched(hh: ScimHarness, id: string): void {
    const u = hh.sim.store.getUser(id)!;
    expect(u.active).toBe(false);
    expect(u.name).toEqual({ givenName: 'Frances', familyName: 'Doe' });
    expect(u[SCHEMA_ENTERPRISE_USER]).toEqual({ department: 'Finance' });
    expect(u.userName).toBe('fran@example.com');
  }

  function seedFran(hh: ScimHarness): ScimUser {
    return hh.sim.store.createUser({ userName: 'fran@example.com', name: { givenName: 'Fran', familyName: 'Doe' }, active: true });
  }

  it('PATCHes when the server supports it', async () => {
    h = await scimHarness();
    const u = seedFran(h);
    await h.scim.patch('Users', u.id, ops);
    expectPatched(h, u.id);
    expect(requestsTo(h.sim, 'PATCH', u.id)).toHaveLength(1);
    expect(requestsTo(h.sim, 'PUT', u.id)).toHaveLength(0);
  });

  it('falls back to GET + PUT when the SPC says PATCH is unsupported', async () => {
    h = await scimHarness({ patchSupported: false });
    const u = seedFran(h);
    await h.scim.patch('Users', u.id, ops);
    expectPatched(h, u.id);
    expect(requestsTo(h.sim, 'PATCH', u.id)).toHaveLength(0);
    expect(requestsTo(h.sim, 'PUT', u.id)).toHaveLength(1);
  });

  it('learns from a 501 without discovery and stops trying PATCH', async () => {
    h = await scimHarness({ patchSupported: false }, { discover: false });
    const u = seedFran(h);
    await h.scim.patch('Users', u.id, ops);
    expectPatched(h, u.id);
    await h.scim.patch('Users', u.id, [{ op: 'replace', path: 'displayName', value: 'F. Doe' }]);
    expect(h.sim.store.getUser(u.id)?.displayName).toBe('F. Doe');
    expect(requestsTo(h.sim, 'PATCH', u.id).map((r) => r.status)).toEqual([501]);
    expect(requestsTo(h.sim, 'PUT', u.id)).toHaveLength(2);
  });

  it('PUT fallback uses If-Match and re-reads on 412, so a concurrent change is not lost', async () => {
    h = await scimHarness({ patchSupported: false, faults: [{ kind: 'latency', method: 'PUT', latencyMs: 400, times: 1 }] });
    const u = seedFran(h);
    const patching = h.scim.patch('Users', u.id, ops);
    // Change the user while our PUT (based on the version we read) is held by the latency fault.
    while (requestsTo(h.sim, 'GET', u.id).length === 0) await new Promise((r) => setTimeout(r, 5));
    h.sim.store.updateUser(u.id, { displayName: 'Changed elsewhere' });
    await patching;
    expectPatched(h, u.id);
    expect(h.sim.store.getUser(u.id)?.displayName).toBe('Changed elsewhere');
    expect(requestsTo(h.sim, 'PUT', u.id).map((r) => r.status)).toEqual([412, 200]);
    expect(requestsTo(h.sim, 'GET', u.id)).toHaveLength(2);
  });

  it("updateMethod 'patch' never falls back", async () => {
    h = await scimHarness({ patchSupported: false }, { updateMethod: 'patch' });
    const u = seedFran(h);
    const err = await rejection(h.scim.patch('Users', u.id, ops));
    expect(err.code).toBe(ErrorCodes.UNSUPPORTED);
    expect(requestsTo(h.sim, 'PUT', u.id)).toHaveLength(0);
  });

  it("updateMethod 'put' never PATCHes", async () => {
    h = await scimHarness({}, { updateMethod: 'put' });
    const u = seedFran(h);
    await h.scim.patch('Users', u.id, ops);
    expectPatched(h, u.id);
    expect(requestsTo(h.sim, 'PATCH', u.id)).toHaveLength(0);
  });

  it('replace PUTs the full resource and returns the server copy', async () => {
    h = await scimHarness();
    const u = structuredClone(seedFran(h));
    const out = await h.scim.replace<ScimUser>('Users', u.id, { ...u, displayName: 'Fran D' });
    expect(out.displayName).toBe('Fran D');
    expect(out.meta?.version).not.toBe(u.meta?.version);
    expect(requestsTo(h.sim, 'PUT', u.id)[0]!.body).not.toHaveProperty('meta');
    expect(h.sim.store.getUser(u.id)?.displayName).toBe('Fran D');
  });
});

describe('ScimClient membership', () => {
  const members = (hh: ScimHarness, groupId: string) => (hh.sim.store.getGroup(groupId)?.members ?? []).map((m) => m.value).sort();

  it('chunks 250 adds into 3 PATCH requests of at most 100 values', async () => {
    h = await scimHarness();
    const users = seedUsers(h.sim, 250);
    const g = h.sim.store.createGroup({ displayName: 'Everyone' });
    await h.scim.patchMembers(
      g.id,
      users.map((u) => u.id),
      [],
    );
    const patches = requestsTo(h.sim, 'PATCH', g.id);
    expect(patches).toHaveLength(3);
    const sizes = patches.map((r) => (r.body as { Operations: { value: unknown[] }[] }).Operations.reduce((n, o) => n + o.value.length, 0));
    expect(sizes).toEqual([100, 100, 50]);
    expect(members(h, g.id)).toEqual(users.map((u) => u.id).sort());
  });

  it.each(['filter', 'value-array'] as const)("removes members with the '%s' dialect the server requires", async (dialect) => {
    h = await scimHarness({ memberRemoveDialect: dialect }, { memberRemoveDialect: dialect, maxMembersPerPatch: 2 });
    const users = seedUsers(h.sim, 6);
    const ids = users.map((u) => u.id);
    const g = h.sim.store.createGroup({ displayName: 'Team', members: ids.slice(0, 4).map((value) => ({ value })) });
    await h.scim.patchMembers(g.id, [ids[4]!, ids[5]!], [ids[0]!, ids[1]!, ids[2]!]);
    expect(members(h, g.id)).toEqual([ids[3]!, ids[4]!, ids[5]!].sort());
    expect(requestsTo(h.sim, 'PATCH', g.id).every((r) => r.status === 200 || r.status === 204)).toBe(true);
  });

  it.each([
    ['filter', 'value-array'],
    ['value-array', 'filter'],
  ] as const)("a server accepting only '%s' refuses the '%s' form with invalidPath", async (server, client) => {
    h = await scimHarness({ memberRemoveDialect: server }, { memberRemoveDialect: client });
    const [u] = seedUsers(h.sim, 1);
    const g = h.sim.store.createGroup({ displayName: 'Team', members: [{ value: u!.id }] });
    const err = await rejection(h.scim.patchMembers(g.id, [], [u!.id]));
    expect(err.code).toBe(ErrorCodes.REJECTED);
    expect(err.status).toBe(400);
    expect(err.detail).toContain('invalidPath');
    expect(members(h, g.id)).toEqual([u!.id]);
  });

  it('falls back to one GET + PUT of the computed member list when PATCH is unsupported', async () => {
    h = await scimHarness({ patchSupported: false });
    const ids = seedUsers(h.sim, 8).map((u) => u.id);
    const g = h.sim.store.createGroup({ displayName: 'Team', members: ids.slice(0, 4).map((value) => ({ value })) });
    h.sim.clearRequests();
    await h.scim.patchMembers(g.id, ids.slice(4), ids.slice(0, 2));
    expect(members(h, g.id)).toEqual(ids.slice(2).sort());
    expect(requestsTo(h.sim, 'PATCH', g.id)).toHaveLength(0);
    expect(requestsTo(h.sim, 'GET', g.id)).toHaveLength(1);
    expect(requestsTo(h.sim, 'PUT', g.id)).toHaveLength(1);
    expect(h.sim.store.getGroup(g.id)?.displayName).toBe('Team');
  });
});

describe('ScimClient discovery', () => {
  it('reads the ServiceProviderConfig once', async () => {
    h = await scimHarness({ maxPageSize: 25 });
    const spc = await h.scim.serviceProviderConfig();
    expect(spc?.patch?.supported).toBe(true);
    expect(spc?.filter?.maxResults).toBe(25);
    await h.scim.serviceProviderConfig();
    await h.scim.listUsers();
    expect(requestsTo(h.sim, 'GET', '/ServiceProviderConfig')).toHaveLength(1);
  });

  it('works without a ServiceProviderConfig (404)', async () => {
    h = await scimHarness({ serviceProviderConfig: false });
    seedUsers(h.sim, 3);
    expect(await h.scim.serviceProviderConfig()).toBeUndefined();
    const users = await h.scim.listUsers();
    expect(users).toHaveLength(3);
    await h.scim.patch('Users', users[0]!.id, [{ op: 'replace', path: 'active', value: false }]);
    expect(h.sim.store.getUser(users[0]!.id)?.active).toBe(false);
    expect(requestsTo(h.sim, 'GET', '/ServiceProviderConfig').map((r) => r.status)).toEqual([404]);
  });

  it('a bad token fails loudly, also on discovery', async () => {
    h = await scimHarness();
    const http = new PlatformClient({ baseUrl: h.sim.url, token: 'wrong-token', allowInsecureHttp: true });
    const scim = new ScimClient(http, {
      scimPath: SCIM_PATH,
      pageSize: 10,
      maxMembersPerPatch: 10,
      memberRemoveDialect: 'filter',
      updateMethod: 'auto',
      discover: true,
    });
    try {
      const err = await rejection(scim.serviceProviderConfig());
      expect(err.code).toBe(ErrorCodes.AUTH_INVALID);
      expect((await rejection(scim.listUsers())).code).toBe(ErrorCodes.AUTH_INVALID);
      expect(err.message).not.toContain('wrong-token');
    } finally {
      await http.close();
    }
  });
});

describe('ScimClient lookups against quirky servers', () => {
  let server: TestServer | undefined;
  let http: PlatformClient | undefined;
  afterEach(async () => {
    await http?.close();
    await server?.close();
    server = undefined;
  });

  const people = ['ann', 'ben', 'cat', 'dan', 'eve'].map((n, i) => ({
    schemas: [SCHEMA_USER],
    id: `id-${i}`,
    userName: `${n}@example.com`,
  }));

  /** A SCIM-ish server over a fixed list: `quirk` decides how it treats the filter. */
  async function quirky(quirk: 'ignores-filter' | 'case-sensitive'): Promise<ScimClient> {
    server = await startTestServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      const start = Number(url.searchParams.get('startIndex') ?? 1);
      const filter = url.searchParams.get('filter');
      let rows = people;
      if (filter && quirk === 'case-sensitive') {
        const ast = parseFilter(filter);
        rows = people.filter((p) => ast.op === 'eq' && p.userName === ast.compValue);
      }
      // Pages of at most 2, whatever was asked.
      sendJson(res, 200, { schemas: [], totalResults: rows.length, Resources: rows.slice(start - 1, start + 1) });
    });
    http = new PlatformClient({ baseUrl: server.url, token: 't', allowInsecureHttp: true });
    return new ScimClient(http, {
      scimPath: '/scim',
      pageSize: 10,
      maxMembersPerPatch: 10,
      memberRemoveDialect: 'filter',
      updateMethod: 'auto',
      discover: false,
    });
  }

  it('re-checks candidates itself and pages on when the server ignores the filter', async () => {
    const scim = await quirky('ignores-filter');
    expect((await scim.findUser({ userName: 'EVE@example.com' }))?.id).toBe('id-4');
    expect(await scim.findUser({ userName: 'zed@example.com' })).toBeUndefined();
  });

  it('tries the lower-case spelling on a server that compares case-sensitively', async () => {
    const scim = await quirky('case-sensitive');
    expect((await scim.findUser({ userName: 'Cat@Example.com' }))?.id).toBe('id-2');
    const filters = server!.requests.map((r) => new URL(r.url, 'http://x').searchParams.get('filter'));
    expect(filters).toEqual(['userName eq "Cat@Example.com"', 'userName eq "cat@example.com"']);
  });
});
