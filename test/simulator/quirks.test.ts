/** Each server quirk of the simulator, over HTTP, exactly as docs/simulator.md describes it. */
import { afterEach, describe, expect, it } from 'vitest';
import { simulateCommand, simulatorOptionsFrom } from '../../src/cli/simulate.ts';
import { startSimulator, type ListPageEvent, type ServerQuirk, type Simulator } from '../../src/simulator/index.ts';
import { newUser, patchOp, q, scim } from './helpers.ts';
import { spawnSimulator } from './spawn.ts';

let sim: Simulator | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

async function withQuirks(...quirks: ServerQuirk[]): Promise<Simulator> {
  sim = await startSimulator({ quirks, maxPageSize: 2 });
  return sim;
}

function seed(s: Simulator, names: string[]): void {
  for (const n of names) s.store.createUser({ userName: n, externalId: `ext-${n}` });
}

describe('simulator quirks', () => {
  it('repeat-first-page: a startIndex past the end answers the first page again', async () => {
    const s = await withQuirks('repeat-first-page');
    seed(s, ['a@x.io', 'b@x.io', 'c@x.io']);
    const last = await scim(s.url, 'GET', '/Users?startIndex=3&count=2');
    expect(last.body.Resources.map((r: { userName: string }) => r.userName)).toEqual(['c@x.io']);
    const past = await scim(s.url, 'GET', '/Users?startIndex=4&count=2');
    expect(past.body.totalResults).toBe(3);
    expect(past.body.Resources.map((r: { userName: string }) => r.userName)).toEqual(['a@x.io', 'b@x.io']);
    // Without the quirk: an empty page.
    await s.close();
    const plain = await withQuirks();
    seed(plain, ['a@x.io']);
    expect((await scim(plain.url, 'GET', '/Users?startIndex=2')).body.Resources).toEqual([]);
  });

  it('case-sensitive-eq: userName eq compares case-exactly', async () => {
    const s = await withQuirks('case-sensitive-eq');
    seed(s, ['Alice@Example.com']);
    expect((await scim(s.url, 'GET', `/Users?${q('userName eq "alice@example.com"')}`)).body.totalResults).toBe(0);
    expect((await scim(s.url, 'GET', `/Users?${q('userName eq "Alice@Example.com"')}`)).body.totalResults).toBe(1);
    await s.close();
    const plain = await withQuirks();
    seed(plain, ['Alice@Example.com']);
    expect((await scim(plain.url, 'GET', `/Users?${q('userName eq "alice@example.com"')}`)).body.totalResults).toBe(1);
  });

  it('reject-escaped-filter: a value with \\" or \\\\ is refused with 400 invalidFilter, plain values work', async () => {
    const s = await withQuirks('reject-escaped-filter');
    seed(s, ['o"brien@x.io']);
    const refused = await scim(s.url, 'GET', `/Users?${q('userName eq "o\\"brien@x.io"')}`);
    expect(refused.status).toBe(400);
    expect(refused.body.scimType).toBe('invalidFilter');
    expect((await scim(s.url, 'GET', `/Users?${q('externalId eq "ext-x"')}`)).status).toBe(200);
  });

  it('created-without-id / created-without-body: 201 without an id, or without a body; the object exists', async () => {
    const s = await withQuirks('created-without-id');
    const res = await scim(s.url, 'POST', '/Users', newUser('new@x.io'));
    expect(res.status).toBe(201);
    expect(res.body.userName).toBe('new@x.io');
    expect(res.body.id).toBeUndefined();
    expect(res.body.meta).toBeUndefined();
    expect(res.headers.get('location')).toBeNull();
    expect(s.store.getUserByUserName('new@x.io')).toBeDefined();
    await s.close();
    const empty = await withQuirks('created-without-body');
    const r2 = await scim(empty.url, 'POST', '/Groups', { schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'], displayName: 'Eng' });
    expect(r2.status).toBe(201);
    expect(r2.body).toBeUndefined();
    expect(empty.store.getGroupByDisplayName('Eng')).toBeDefined();
  });

  it('unique-email-types: a missing or repeated type is refused on POST, PUT and PATCH', async () => {
    const s = await withQuirks('unique-email-types');
    const twoWork = {
      emails: [
        { value: 'a@x.io', type: 'work' },
        { value: 'b@x.io', type: 'Work' },
      ],
    };
    expect((await scim(s.url, 'POST', '/Users', newUser('a@x.io', twoWork))).status).toBe(400);
    expect((await scim(s.url, 'POST', '/Users', newUser('a@x.io', { emails: [{ value: 'a@x.io' }] }))).body.scimType).toBe('invalidValue');
    const ok = await scim(
      s.url,
      'POST',
      '/Users',
      newUser('a@x.io', {
        emails: [
          { value: 'a@x.io', type: 'work' },
          { value: 'b@x.io', type: 'home' },
        ],
      }),
    );
    expect(ok.status).toBe(201);
    expect((await scim(s.url, 'PUT', `/Users/${ok.body.id}`, newUser('a@x.io', twoWork))).status).toBe(400);
    const patch = patchOp({ op: 'add', path: 'emails', value: [{ value: 'c@x.io', type: 'home' }] });
    expect((await scim(s.url, 'PATCH', `/Users/${ok.body.id}`, patch)).status).toBe(400);
    expect(s.store.getUser(ok.body.id)?.emails).toHaveLength(2);
  });

  it('case-sensitive-username: Alice and alice may both exist; the exact same name is still a 409', async () => {
    const s = await withQuirks('case-sensitive-username');
    expect((await scim(s.url, 'POST', '/Users', newUser('Alice@x.io'))).status).toBe(201);
    expect((await scim(s.url, 'POST', '/Users', newUser('alice@x.io'))).status).toBe(201);
    expect((await scim(s.url, 'POST', '/Users', newUser('alice@x.io'))).status).toBe(409);
    // eq stays case-insensitive (RFC 7643): both come back.
    expect((await scim(s.url, 'GET', `/Users?${q('userName eq "ALICE@x.io"')}`)).body.totalResults).toBe(2);
    await s.close();
    const plain = await withQuirks();
    expect((await scim(plain.url, 'POST', '/Users', newUser('Alice@x.io'))).status).toBe(201);
    const clash = await scim(plain.url, 'POST', '/Users', newUser('alice@x.io'));
    expect(clash.status).toBe(409);
    expect(clash.body.scimType).toBe('uniqueness');
  });

  it('unknown quirk names are refused', async () => {
    await expect(startSimulator({ quirks: ['nope' as ServerQuirk] })).rejects.toThrow(/unknown simulator quirk "nope"/);
  });
});

describe('objects changing between pages', () => {
  it("mutate-between-pages 'churn': one deleted at the front, one created at the end, same totalResults", async () => {
    sim = await startSimulator({ maxPageSize: 2, faults: [{ kind: 'mutate-between-pages', mutation: 'churn', times: 1 }] });
    seed(sim, ['a@x.io', 'b@x.io', 'c@x.io', 'd@x.io']);
    const p1 = await scim(sim.url, 'GET', '/Users?startIndex=1&count=2');
    const p2 = await scim(sim.url, 'GET', '/Users?startIndex=3&count=2');
    expect(p1.body.totalResults).toBe(4);
    expect(p2.body.totalResults).toBe(4);
    // c@x.io moved to index 2 and was skipped by offset paging.
    const seen = [...p1.body.Resources, ...p2.body.Resources].map((r: { userName: string }) => r.userName);
    expect(seen).toEqual(['a@x.io', 'b@x.io', 'd@x.io', expect.stringMatching(/^churn-/)]);
    expect(sim.store.users().map((u) => u.userName)).toContain('c@x.io');
  });

  it('afterListPage is called once per page with what was served, and may change the store', async () => {
    const events: Omit<ListPageEvent, 'store'>[] = [];
    sim = await startSimulator({
      maxPageSize: 2,
      afterListPage: ({ store, ...e }) => {
        events.push(e);
        if (events.length === 1) store.deleteUser(store.users()[0]!.id);
      },
    });
    seed(sim, ['a@x.io', 'b@x.io', 'c@x.io']);
    await scim(sim.url, 'GET', '/Users?startIndex=1&count=2');
    await scim(sim.url, 'GET', `/Users?${q('userName eq "c@x.io"')}`);
    expect(events).toEqual([
      { resourceType: 'Users', startIndex: 1, returned: 2, totalResults: 3, filter: undefined },
      { resourceType: 'Users', startIndex: 1, returned: 1, totalResults: 1, filter: 'userName eq "c@x.io"' },
    ]);
    expect(sim.store.counts().users).toBe(2);
  });
});

describe('simulate --quirks', () => {
  it('parses a comma-separated, repeatable list and refuses unknown names', () => {
    const cmd = simulateCommand()
      .exitOverride()
      .configureOutput({ writeErr: () => {} });
    cmd.parseOptions(['--quirks', 'repeat-first-page,case-sensitive-eq', '--quirks', 'created-without-id']);
    expect(simulatorOptionsFrom(cmd.opts()).quirks).toEqual(['repeat-first-page', 'case-sensitive-eq', 'created-without-id']);
    expect(() =>
      simulateCommand()
        .exitOverride()
        .configureOutput({ writeErr: () => {} })
        .parseOptions(['--quirks', 'nope']),
    ).toThrow(/unknown quirk "nope"/);
  });

  it('the simulate process serves with the quirk on', async () => {
    const proc = await spawnSimulator(['--port', '0', '--quirks', 'repeat-first-page', '--users', '3']);
    try {
      const res = await fetch(`${proc.url}/api/scim/v2/Users?startIndex=10`, { headers: { authorization: 'Bearer test-token' } });
      expect(((await res.json()) as { Resources: unknown[] }).Resources).toHaveLength(3);
    } finally {
      await proc.stop();
    }
  });
});
