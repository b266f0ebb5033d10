/**
 * A create whose answer does not name the object is resolved by lookup before it counts as
 * failed — against the simulator's real-server quirks, over sockets: 201 without an id or a
 * body, 409 on servers whose filters compare case-sensitively or refuse escaped quotes, and
 * duplicates on the platform that make the answer ambiguous (never guessed).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCodes } from '../../src/errors.ts';
import { PlatformClient } from '../../src/platform/http-client.ts';
import { ScimClient } from '../../src/platform/scim/client.ts';
import { pickCandidate } from '../../src/platform/scim/resolve.ts';
import { SCHEMA_GROUP, SCHEMA_USER, type ScimUser } from '../../src/platform/scim/types.ts';
import { rejection } from '../helpers/rejection.ts';
import { requestsTo, scimHarness, type ScimHarness } from './helpers/scim.ts';
import { sendJson, startTestServer } from './helpers/http-server.ts';

let h: ScimHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

function filters(hh: ScimHarness, path = '/Users'): string[] {
  return requestsTo(hh.sim, 'GET', path).map((r) => r.query['filter'] ?? '(full listing)');
}

describe('201 without an id', () => {
  it('created-without-id: the new user is found by externalId, not created twice', async () => {
    h = await scimHarness({ quirks: ['created-without-id'] }, { discover: false });
    const res = await h.scim.createUser({ schemas: [SCHEMA_USER], userName: 'new@example.com', externalId: 'e-new' });
    const stored = h.sim.store.users();
    expect(stored).toHaveLength(1);
    expect(res).toEqual({ resource: expect.objectContaining({ id: stored[0]!.id, externalId: 'e-new' }), adopted: false, via: 'created' });
    expect(filters(h)).toEqual(['externalId eq "e-new"']);
  });

  it('created-without-body: the new group is found by externalId', async () => {
    h = await scimHarness({ quirks: ['created-without-body'] }, { discover: false });
    const res = await h.scim.createGroup({ schemas: [SCHEMA_GROUP], displayName: 'Eng', externalId: 'g-eng' });
    expect(res.resource.id).toBe(h.sim.store.getGroupByDisplayName('Eng')?.id);
    expect(res).toMatchObject({ adopted: false, via: 'created' });
  });

  it('201 without an id on a server that refuses escaped filters: found by a full listing', async () => {
    h = await scimHarness({ quirks: ['created-without-body', 'reject-escaped-filter'], maxPageSize: 3 }, { discover: false, pageSize: 3 });
    for (let i = 0; i < 7; i++) h.sim.store.createUser({ userName: `other${i}@example.com` });
    const res = await h.scim.createUser({ schemas: [SCHEMA_USER], userName: 'o"brien@example.com', externalId: 'e\\"1' });
    expect(res.resource.userName).toBe('o"brien@example.com');
    expect(res.adopted).toBe(false);
    expect(h.sim.store.users()).toHaveLength(8);
    // Both filters hold an escaped quote and were refused (400); the listing decided.
    expect(requestsTo(h.sim, 'GET', '/Users').filter((r) => r.status === 400)).toHaveLength(2);
    expect(filters(h).at(-1)).toBe('(full listing)');
  });

  it('the answer lacks the id and the object cannot be found: a clear E_BAD_RESPONSE, no second POST', async () => {
    // A server that answers 201 without an id and then cannot show the object.
    const server = await startTestServer((req, res) => {
      if (req.method === 'POST') return sendJson(res, 201, { schemas: [SCHEMA_USER], userName: 'ghost@example.com' });
      return sendJson(res, 200, { schemas: [], totalResults: 0, Resources: [] });
    });
    const http = new PlatformClient({ baseUrl: server.url, token: 't', allowInsecureHttp: true });
    try {
      const scim = new ScimClient(http, {
        scimPath: '/scim',
        pageSize: 10,
        maxMembersPerPatch: 10,
        memberRemoveDialect: 'filter',
        updateMethod: 'auto',
        discover: false,
      });
      const err = await rejection(scim.createUser({ schemas: [SCHEMA_USER], userName: 'ghost@example.com', externalId: 'e-ghost' }));
      expect(err.code).toBe(ErrorCodes.BAD_RESPONSE);
      expect(err.message).toContain('without the new object');
      expect(server.requests.filter((r) => r.method === 'POST')).toHaveLength(1);
      // externalId filter, userName filter, then the listing (the server said it was created).
      expect(server.requests.filter((r) => r.method === 'GET')).toHaveLength(3);
    } finally {
      await http.close();
      await server.close();
    }
  });
});

describe('409 resolved by lookup', () => {
  it('case-sensitive eq: Bob@Example.com exists, we create bob@example.com → found by the full listing', async () => {
    h = await scimHarness({ quirks: ['case-sensitive-eq'] }, { discover: false });
    const existing = h.sim.store.createUser({ userName: 'Bob@Example.com' });
    const res = await h.scim.createUser({ schemas: [SCHEMA_USER], userName: 'bob@example.com', externalId: 'e-bob' });
    expect(res).toMatchObject({ adopted: true, via: 'conflict' });
    expect(res.resource.id).toBe(existing.id);
    const seen = filters(h);
    expect(seen.slice(0, 2)).toEqual(['externalId eq "e-bob"', 'userName eq "bob@example.com"']);
    expect(seen.slice(2).every((f) => f === '(full listing)')).toBe(true);
  });

  it('case-sensitive eq: the lower-case spelling is tried before listing everything', async () => {
    h = await scimHarness({ quirks: ['case-sensitive-eq'] }, { discover: false });
    const existing = h.sim.store.createUser({ userName: 'carol@example.com' });
    const res = await h.scim.createUser({ schemas: [SCHEMA_USER], userName: 'Carol@Example.com', externalId: 'e-carol' });
    expect(res.resource.id).toBe(existing.id);
    expect(filters(h)).toEqual(['externalId eq "e-carol"', 'userName eq "Carol@Example.com"', 'userName eq "carol@example.com"']);
  });

  it('escaped quote refused by the filter (400 invalidFilter): found by the full listing', async () => {
    h = await scimHarness({ quirks: ['reject-escaped-filter'] }, { discover: false });
    // An admin-created account (no externalId): only its name can find it.
    const existing = h.sim.store.createUser({ userName: 'o"brien@example.com' });
    const res = await h.scim.createUser({ schemas: [SCHEMA_USER], userName: 'o"brien@example.com', externalId: 'e-ob' });
    expect(res).toMatchObject({ adopted: true, via: 'conflict' });
    expect(res.resource.id).toBe(existing.id);
    const statuses = requestsTo(h.sim, 'GET', '/Users').map((r) => r.status);
    expect(statuses.slice(0, 2)).toEqual([200, 400]);
    expect(
      filters(h)
        .slice(2)
        .every((f) => f === '(full listing)'),
    ).toBe(true);
  });

  it('group 409 on a case-sensitive server: found by displayName in the listing', async () => {
    h = await scimHarness({ quirks: ['case-sensitive-eq'] }, { discover: false });
    const existing = h.sim.store.createGroup({ displayName: 'Platform Team' });
    const res = await h.scim.createGroup({ schemas: [SCHEMA_GROUP], displayName: 'platform team', externalId: 'g-pt' });
    expect(res.resource.id).toBe(existing.id);
    expect(res.adopted).toBe(true);
  });

  it('two platform objects carry our externalId: E_AMBIGUOUS_MATCH, nothing adopted', async () => {
    h = await scimHarness({}, { discover: false });
    h.sim.store.createUser({ userName: 'dana@example.com', externalId: 'e-dana' });
    h.sim.store.createUser({ userName: 'dana.old@example.com', externalId: 'e-dana' });
    const err = await rejection(h.scim.createUser({ schemas: [SCHEMA_USER], userName: 'dana@example.com', externalId: 'e-dana' }));
    expect(err.code).toBe(ErrorCodes.AMBIGUOUS_MATCH);
    expect(err.kind).toBe('conflict');
    expect(err.message).toMatch(/2 platform objects match by externalId e-dana/);
  });

  it('case-sensitive uniqueness: Alice and alice both exist; creating alice adopts the exact spelling', async () => {
    h = await scimHarness({ quirks: ['case-sensitive-username'] }, { discover: false });
    h.sim.store.createUser({ userName: 'Alice@example.com' });
    const exact = h.sim.store.createUser({ userName: 'alice@example.com' });
    const res = await h.scim.createUser({ schemas: [SCHEMA_USER], userName: 'alice@example.com', externalId: 'e-alice' });
    expect(res.resource.id).toBe(exact.id);
  });

  it('409 and nothing found anywhere: E_CONFLICT that says so', async () => {
    h = await scimHarness({ faults: [{ kind: 'status', status: 409, method: 'POST', times: 1 }] }, { discover: false });
    const err = await rejection(h.scim.createUser({ schemas: [SCHEMA_USER], userName: 'nobody@example.com', externalId: 'e-0' }));
    expect(err.code).toBe(ErrorCodes.CONFLICT);
    expect(err.message).toContain('not even in a full listing');
    expect(filters(h).at(-1)).toBe('(full listing)');
  });
});

describe('pickCandidate', () => {
  const u = (id: string, userName: string, externalId?: string): ScimUser => ({
    schemas: [],
    id,
    userName,
    ...(externalId ? { externalId } : {}),
  });
  const who = { externalId: 'e-1', name: 'Ann@x.io', nameAttr: 'userName' as const, label: 'user Ann@x.io' };

  it('externalId first, then the exact spelling among case-insensitive matches', () => {
    expect(pickCandidate([u('1', 'zed@x.io', 'e-1'), u('2', 'Ann@x.io')], who)?.id).toBe('1');
    expect(pickCandidate([u('1', 'ann@x.io'), u('2', 'Ann@x.io')], who)?.id).toBe('2');
    expect(pickCandidate([u('1', 'ANN@x.io')], who)?.id).toBe('1');
    expect(pickCandidate([u('1', 'bob@x.io')], who)).toBeUndefined();
  });

  it('several equally good candidates are ambiguous', () => {
    expect(() => pickCandidate([u('1', 'ann@x.io'), u('2', 'ANN@x.io')], who)).toThrow(/2 platform objects match by userName Ann@x.io/);
  });
});
