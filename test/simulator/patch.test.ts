import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/index.ts';
import { SCHEMA_ENTERPRISE_USER } from '../../src/platform/scim/types.ts';
import { newUser, patchOp, scim } from './helpers.ts';

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator();
});
afterAll(() => sim.close());
beforeEach(() => sim.store.clear());

function user(extra: Record<string, unknown> = {}): string {
  return sim.store.createUser({
    userName: 'pat@example.com',
    name: { givenName: 'Pat', familyName: 'Doe' },
    emails: [{ value: 'pat@example.com', type: 'work', primary: true }],
    active: true,
    ...extra,
  }).id;
}

function members(n: number): string[] {
  return Array.from({ length: n }, (_, i) => sim.store.createUser({ userName: `m${i}@example.com` }).id);
}

describe('PATCH on users', () => {
  it('replaces simple and sub-attributes by path and bumps the version', async () => {
    const id = user();
    const r = await scim(
      sim.url,
      'PATCH',
      `/Users/${id}`,
      patchOp({ op: 'Replace', path: 'active', value: false }, { op: 'replace', path: 'name.givenName', value: 'Patricia' }),
    );
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ active: false, name: { givenName: 'Patricia', familyName: 'Doe' }, meta: { version: 'W/"2"' } });
  });

  it('handles a no-path replace with an object value (extension and dotted keys too)', async () => {
    const id = user();
    const r = await scim(
      sim.url,
      'PATCH',
      `/Users/${id}`,
      patchOp({
        op: 'replace',
        value: { displayName: 'P. Doe', 'name.familyName': 'Dough', active: 'False', [SCHEMA_ENTERPRISE_USER]: { department: 'R&D' } },
      }),
    );
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      displayName: 'P. Doe',
      active: false,
      name: { givenName: 'Pat', familyName: 'Dough' },
      [SCHEMA_ENTERPRISE_USER]: { department: 'R&D' },
    });
  });

  it('tolerates an echoed unchanged id in a no-path value but refuses a different one', async () => {
    const id = user();
    const same = await scim(sim.url, 'PATCH', `/Users/${id}`, patchOp({ op: 'replace', value: { id, active: false } }));
    expect(same.status).toBe(200);
    expect(same.body.active).toBe(false);
    const other = await scim(sim.url, 'PATCH', `/Users/${id}`, patchOp({ op: 'replace', value: { id: 'another', active: true } }));
    expect(other.status).toBe(400);
    expect(other.body.scimType).toBe('mutability');
  });

  it('patches filtered multi-valued paths, creating the entry when none matches', async () => {
    const id = user();
    let r = await scim(
      sim.url,
      'PATCH',
      `/Users/${id}`,
      patchOp({ op: 'replace', path: 'emails[type eq "work"].value', value: 'new@example.com' }),
    );
    expect(r.body.emails).toEqual([{ value: 'new@example.com', type: 'work', primary: true }]);
    r = await scim(
      sim.url,
      'PATCH',
      `/Users/${id}`,
      patchOp({ op: 'add', path: 'emails[type eq "home"].value', value: 'home@example.net' }),
    );
    expect(r.body.emails).toEqual([
      { value: 'new@example.com', type: 'work', primary: true },
      { type: 'home', value: 'home@example.net' },
    ]);
    r = await scim(sim.url, 'PATCH', `/Users/${id}`, patchOp({ op: 'remove', path: 'emails[type eq "work"]' }));
    expect(r.body.emails).toEqual([{ type: 'home', value: 'home@example.net' }]);
  });

  it('patches an enterprise extension attribute by its URN path, and removes it', async () => {
    const id = user();
    const path = `${SCHEMA_ENTERPRISE_USER}:department`;
    let r = await scim(sim.url, 'PATCH', `/Users/${id}`, patchOp({ op: 'add', path, value: 'Finance' }));
    expect(r.body[SCHEMA_ENTERPRISE_USER]).toEqual({ department: 'Finance' });
    expect(r.body.schemas).toContain(SCHEMA_ENTERPRISE_USER);
    r = await scim(sim.url, 'PATCH', `/Users/${id}`, patchOp({ op: 'remove', path }));
    expect(r.body[SCHEMA_ENTERPRISE_USER]).toEqual({});
  });

  it('refuses read-only targets, bad ops and unique collisions; leaves the user untouched', async () => {
    const id = user();
    sim.store.createUser({ userName: 'taken@example.com' });
    const ro = await scim(sim.url, 'PATCH', `/Users/${id}`, patchOp({ op: 'replace', path: 'id', value: 'x' }));
    expect(ro.status).toBe(400);
    expect(ro.body.scimType).toBe('mutability');
    expect((await scim(sim.url, 'PATCH', `/Users/${id}`, patchOp({ op: 'move', path: 'active', value: true }))).status).toBe(400);
    expect((await scim(sim.url, 'PATCH', `/Users/${id}`, { Operations: [{ op: 'add', path: 'title', value: 'x' }] })).status).toBe(400);
    const bad = await scim(sim.url, 'PATCH', `/Users/${id}`, patchOp({ op: 'add', path: 'emails[type eq', value: 'x' }));
    expect(bad.body.scimType).toBe('invalidPath');
    // first op is fine, second collides: nothing of the PATCH may stick
    const dup = await scim(
      sim.url,
      'PATCH',
      `/Users/${id}`,
      patchOp({ op: 'replace', path: 'title', value: 'Boss' }, { op: 'replace', path: 'userName', value: 'TAKEN@example.com' }),
    );
    expect(dup.status).toBe(409);
    expect(sim.store.getUser(id)).toMatchObject({ userName: 'pat@example.com', meta: { version: 'W/"1"' } });
    expect(sim.store.getUser(id)?.['title']).toBeUndefined();
  });

  it('PUT with a replaced userName keeps the id and frees the old name', async () => {
    const id = user();
    const r = await scim(sim.url, 'PUT', `/Users/${id}`, newUser('renamed@example.com'));
    expect(r.status).toBe(200);
    expect(sim.store.getUserByUserName('pat@example.com')).toBeUndefined();
    expect(sim.store.getUserByUserName('renamed@example.com')?.id).toBe(id);
  });
});

describe('PATCH on group members', () => {
  it('adds members (re-adding an existing one is a no-op) and removes with a filtered path', async () => {
    const [a, b, c] = members(3) as [string, string, string];
    const g = sim.store.createGroup({ displayName: 'G', members: [{ value: a }] });
    let r = await scim(
      sim.url,
      'PATCH',
      `/Groups/${g.id}`,
      patchOp({ op: 'add', path: 'members', value: [{ value: a }, { value: b }, { value: c }] }),
    );
    expect(r.status).toBe(200);
    expect(r.body.members.map((m: { value: string }) => m.value)).toEqual([a, b, c]);
    r = await scim(sim.url, 'PATCH', `/Groups/${g.id}`, patchOp({ op: 'remove', path: `members[value eq "${b}"]` }));
    expect(r.body.members.map((m: { value: string }) => m.value)).toEqual([a, c]);
    expect(sim.store.groupIdsOf(b)).toEqual([]);
  });

  it('removes members with the value-array dialect, and all of them without a value', async () => {
    const [a, b, c] = members(3) as [string, string, string];
    const g = sim.store.createGroup({ displayName: 'G', members: [a, b, c].map((value) => ({ value })) });
    let r = await scim(
      sim.url,
      'PATCH',
      `/Groups/${g.id}`,
      patchOp({ op: 'remove', path: 'members', value: [{ value: a }, { value: c }] }),
    );
    expect(r.body.members.map((m: { value: string }) => m.value)).toEqual([b]);
    r = await scim(sim.url, 'PATCH', `/Groups/${g.id}`, patchOp({ op: 'remove', path: 'members' }));
    expect(r.body.members).toBeUndefined();
  });

  it('refuses unknown member ids with 400 and keeps the group unchanged', async () => {
    const [a] = members(1) as [string];
    const g = sim.store.createGroup({ displayName: 'G', members: [{ value: a }] });
    const r = await scim(sim.url, 'PATCH', `/Groups/${g.id}`, patchOp({ op: 'add', path: 'members', value: [{ value: 'no-such-user' }] }));
    expect(r.status).toBe(400);
    expect(sim.store.getGroup(g.id)?.members?.map((m) => m.value)).toEqual([a]);
  });

  it('replaces the displayName and the whole member list', async () => {
    const [a, b] = members(2) as [string, string];
    const g = sim.store.createGroup({ displayName: 'G', members: [{ value: a }] });
    const r = await scim(
      sim.url,
      'PATCH',
      `/Groups/${g.id}`,
      patchOp({ op: 'replace', value: { displayName: 'G2' } }, { op: 'replace', path: 'members', value: [{ value: b }] }),
    );
    expect(r.body).toMatchObject({ displayName: 'G2', members: [expect.objectContaining({ value: b })] });
  });
});

describe('dialects and limits', () => {
  it('a filter-only server refuses the value-array remove with 400 invalidPath', async () => {
    const s = await startSimulator({ memberRemoveDialect: 'filter' });
    try {
      const a = s.store.createUser({ userName: 'a@example.com' }).id;
      const g = s.store.createGroup({ displayName: 'G', members: [{ value: a }] });
      const refused = await scim(s.url, 'PATCH', `/Groups/${g.id}`, patchOp({ op: 'remove', path: 'members', value: [{ value: a }] }));
      expect(refused.status).toBe(400);
      expect(refused.body.scimType).toBe('invalidPath');
      expect(s.store.getGroup(g.id)?.members).toHaveLength(1);
      expect((await scim(s.url, 'PATCH', `/Groups/${g.id}`, patchOp({ op: 'remove', path: `members[value eq "${a}"]` }))).status).toBe(200);
    } finally {
      await s.close();
    }
  });

  it('a value-array-only server refuses the filtered member path with 400 invalidPath', async () => {
    const s = await startSimulator({ memberRemoveDialect: 'value-array' });
    try {
      const a = s.store.createUser({ userName: 'a@example.com' }).id;
      const g = s.store.createGroup({ displayName: 'G', members: [{ value: a }] });
      const refused = await scim(s.url, 'PATCH', `/Groups/${g.id}`, patchOp({ op: 'remove', path: `members[value eq "${a}"]` }));
      expect(refused.status).toBe(400);
      expect(refused.body.scimType).toBe('invalidPath');
      expect(
        (await scim(s.url, 'PATCH', `/Groups/${g.id}`, patchOp({ op: 'remove', path: 'members', value: [{ value: a }] }))).status,
      ).toBe(200);
      expect(s.store.getGroup(g.id)?.members).toEqual([]);
    } finally {
      await s.close();
    }
  });

  it('refuses more member values than maxOperationsPerPatch with 400 tooMany', async () => {
    const s = await startSimulator({ maxOperationsPerPatch: 5 });
    try {
      const ids = Array.from({ length: 6 }, (_, i) => s.store.createUser({ userName: `u${i}@example.com` }).id);
      const g = s.store.createGroup({ displayName: 'G' });
      const tooMany = await scim(
        s.url,
        'PATCH',
        `/Groups/${g.id}`,
        patchOp({ op: 'add', path: 'members', value: ids.map((value) => ({ value })) }),
      );
      expect(tooMany.status).toBe(400);
      expect(tooMany.body.scimType).toBe('tooMany');
      const ok = await scim(
        s.url,
        'PATCH',
        `/Groups/${g.id}`,
        patchOp({ op: 'add', path: 'members', value: ids.slice(0, 5).map((value) => ({ value })) }),
      );
      expect(ok.status).toBe(200);
      expect(s.requests.filter((r) => r.method === 'PATCH').map((r) => r.status)).toEqual([400, 200]);
    } finally {
      await s.close();
    }
  });

  it('answers 501 to PATCH when unsupported, says so in SPC, and PUT still works', async () => {
    const s = await startSimulator({ patchSupported: false });
    try {
      const id = s.store.createUser({ userName: 'a@example.com' }).id;
      const r = await scim(s.url, 'PATCH', `/Users/${id}`, patchOp({ op: 'replace', path: 'active', value: false }));
      expect(r.status).toBe(501);
      expect(r.body).toMatchObject({ status: '501', schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'] });
      expect((await scim(s.url, 'GET', '/ServiceProviderConfig')).body.patch.supported).toBe(false);
      expect((await scim(s.url, 'PUT', `/Users/${id}`, newUser('a@example.com', { active: false }))).body.active).toBe(false);
    } finally {
      await s.close();
    }
  });

  it('answers 404 for /ServiceProviderConfig when disabled', async () => {
    const s = await startSimulator({ serviceProviderConfig: false });
    try {
      expect((await scim(s.url, 'GET', '/ServiceProviderConfig')).status).toBe(404);
    } finally {
      await s.close();
    }
  });
});
