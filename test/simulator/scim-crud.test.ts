import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/index.ts';
import { SCHEMA_ERROR } from '../../src/platform/scim/types.ts';
import { newGroup, newUser, scim } from './helpers.ts';

let sim: Simulator;

beforeAll(async () => {
  sim = await startSimulator();
});
afterAll(() => sim.close());
beforeEach(() => sim.store.clear());

describe('users', () => {
  it('creates, reads, replaces and deletes a user with server-owned meta', async () => {
    const created = await scim(sim.url, 'POST', '/Users', newUser('alice@example.com', { externalId: 'e1', name: { givenName: 'Alice' } }));
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.body.meta).toMatchObject({ resourceType: 'User', version: 'W/"1"', location: `${sim.url}/api/scim/v2/Users/${id}` });
    expect(created.headers.get('location')).toBe(created.body.meta.location);
    expect(created.headers.get('etag')).toBe('W/"1"');

    const got = await scim(sim.url, 'GET', `/Users/${id}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(created.body);

    const put = await scim(
      sim.url,
      'PUT',
      `/Users/${id}`,
      newUser('alice@example.com', { id: 'ignored', displayName: 'Alice A.', active: false }),
    );
    expect(put.status).toBe(200);
    expect(put.body.id).toBe(id);
    expect(put.body.meta.created).toBe(created.body.meta.created);
    expect(put.body.meta.version).toBe('W/"2"');
    expect(put.body.displayName).toBe('Alice A.');
    expect(put.body.externalId).toBeUndefined(); // PUT replaces: omitted attributes go away
    expect(put.body.name).toBeUndefined();

    expect((await scim(sim.url, 'DELETE', `/Users/${id}`)).status).toBe(204);
    const gone = await scim(sim.url, 'GET', `/Users/${id}`);
    expect(gone.status).toBe(404);
    expect(gone.body).toMatchObject({ schemas: [SCHEMA_ERROR], status: '404' });
    expect(sim.store.counts().users).toBe(0);
  });

  it('refuses a userName that differs only in case with 409 uniqueness, also on PUT', async () => {
    const a = await scim(sim.url, 'POST', '/Users', newUser('Bob@Example.com'));
    expect(a.status).toBe(201);
    const dup = await scim(sim.url, 'POST', '/Users', newUser('bob@example.COM'));
    expect(dup.status).toBe(409);
    expect(dup.body).toMatchObject({ schemas: [SCHEMA_ERROR], status: '409', scimType: 'uniqueness' });
    const c = await scim(sim.url, 'POST', '/Users', newUser('carol@example.com'));
    const put = await scim(sim.url, 'PUT', `/Users/${c.body.id}`, newUser('BOB@example.com'));
    expect(put.status).toBe(409);
    // a user may keep (or re-case) its own userName
    expect((await scim(sim.url, 'PUT', `/Users/${a.body.id}`, newUser('bob@example.com'))).status).toBe(200);
  });

  it('validates bodies: core schema, userName, boolean active', async () => {
    const noSchema = await scim(sim.url, 'POST', '/Users', { userName: 'x@example.com' });
    expect(noSchema.status).toBe(400);
    expect(noSchema.body.scimType).toBe('invalidValue');
    expect((await scim(sim.url, 'POST', '/Users', newUser(''))).status).toBe(400);
    expect((await scim(sim.url, 'POST', '/Users', newUser('y@example.com', { active: 'maybe' }))).status).toBe(400);
    const coerced = await scim(sim.url, 'POST', '/Users', newUser('z@example.com', { active: 'False' }));
    expect(coerced.body.active).toBe(false);
    const bad = await fetch(`${sim.url}/api/scim/v2/Users`, {
      method: 'POST',
      headers: { authorization: 'Bearer test-token' },
      body: '{not json',
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { scimType: string }).scimType).toBe('invalidSyntax');
  });

  it('honours If-Match with 412 on a stale version', async () => {
    const u = await scim(sim.url, 'POST', '/Users', newUser('etag@example.com'));
    const stale = await scim(sim.url, 'PUT', `/Users/${u.body.id}`, newUser('etag@example.com'), { 'if-match': 'W/"7"' });
    expect(stale.status).toBe(412);
    const ok = await scim(sim.url, 'PUT', `/Users/${u.body.id}`, newUser('etag@example.com'), { 'if-match': 'W/"1"' });
    expect(ok.status).toBe(200);
  });

  it('serves the /scim/v2 alias for the same data', async () => {
    const u = sim.store.createUser({ userName: 'alias@example.com' });
    const res = await fetch(`${sim.url}/scim/v2/Users/${u.id}`, { headers: { authorization: 'Bearer test-token' } });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { userName: string }).userName).toBe('alias@example.com');
  });
});

describe('groups', () => {
  it('creates a group with members, fills display and $ref, and exposes user.groups', async () => {
    const u = sim.store.createUser({ userName: 'dan@example.com', displayName: 'Dan' });
    const g = await scim(sim.url, 'POST', '/Groups', newGroup('Admins', [u.id, u.id]));
    expect(g.status).toBe(201);
    expect(g.body.members).toEqual([{ value: u.id, display: 'Dan', $ref: `${sim.url}/api/scim/v2/Users/${u.id}` }]);
    const user = await scim(sim.url, 'GET', `/Users/${u.id}`);
    expect(user.body.groups).toEqual([expect.objectContaining({ value: g.body.id, display: 'Admins' })]);
  });

  it('refuses unknown members and duplicate display names', async () => {
    const bad = await scim(sim.url, 'POST', '/Groups', newGroup('G', ['00000000-0000-4000-8000-000000000000']));
    expect(bad.status).toBe(400);
    expect(bad.body.scimType).toBe('invalidValue');
    expect((await scim(sim.url, 'POST', '/Groups', newGroup('Team'))).status).toBe(201);
    const dup = await scim(sim.url, 'POST', '/Groups', newGroup('TEAM'));
    expect(dup.status).toBe(409);
    expect(dup.body.scimType).toBe('uniqueness');
  });

  it('removes a deleted user from every group and bumps the group version', async () => {
    const a = sim.store.createUser({ userName: 'a@example.com' });
    const b = sim.store.createUser({ userName: 'b@example.com' });
    const g = sim.store.createGroup({ displayName: 'Both', members: [{ value: a.id }, { value: b.id }] });
    expect((await scim(sim.url, 'DELETE', `/Users/${a.id}`)).status).toBe(204);
    const after = await scim(sim.url, 'GET', `/Groups/${g.id}`);
    expect(after.body.members.map((m: { value: string }) => m.value)).toEqual([b.id]);
    expect(after.body.meta.version).toBe('W/"2"');
  });

  it('PUT replaces the member list; DELETE removes the group from user.groups', async () => {
    const a = sim.store.createUser({ userName: 'a@example.com' });
    const b = sim.store.createUser({ userName: 'b@example.com' });
    const g = sim.store.createGroup({ displayName: 'G', members: [{ value: a.id }] });
    const put = await scim(sim.url, 'PUT', `/Groups/${g.id}`, newGroup('G', [b.id]));
    expect(put.status).toBe(200);
    expect(sim.store.groupIdsOf(a.id)).toEqual([]);
    expect(sim.store.groupIdsOf(b.id)).toEqual([g.id]);
    expect((await scim(sim.url, 'DELETE', `/Groups/${g.id}`)).status).toBe(204);
    expect(sim.store.groupIdsOf(b.id)).toEqual([]);
  });
});

describe('in-process store API', () => {
  it('applies the same rules as HTTP and its drift is visible over HTTP', async () => {
    const u = sim.store.createUser({ userName: 'drift@example.com', active: true });
    expect(() => sim.store.createUser({ userName: 'DRIFT@example.com' })).toThrow(/already exists/);
    sim.store.updateUser(u.id, { active: false, title: 'Changed behind your back' });
    const got = await scim(sim.url, 'GET', `/Users/${u.id}`);
    expect(got.body).toMatchObject({ active: false, title: 'Changed behind your back', meta: { version: 'W/"2"' } });
    expect(sim.store.getUserByUserName('DRIFT@EXAMPLE.COM')?.id).toBe(u.id);
    expect(sim.store.deleteUser(u.id)).toBe(true);
    expect(sim.store.deleteUser(u.id)).toBe(false);
  });
});
