import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SourceError } from '../../src/errors.ts';
import { SCHEMA_ENTERPRISE_USER, SCHEMA_GROUP, SCHEMA_USER } from '../../src/platform/scim/types.ts';
import { scimSourceSchema, type ScimSourceInput } from '../../src/sources/scim/schema.ts';
import { ScimSource } from '../../src/sources/scim/source.ts';
import { mapScimGroups } from '../../src/sources/scim/map.ts';
import { startSimulator, type Simulator } from '../../src/simulator/index.ts';

let sim: Simulator;
const TOKEN = 'source-token';
const N = 57;

const source = (over: Partial<ScimSourceInput> = {}): ScimSource =>
  new ScimSource(
    scimSourceSchema.parse({
      type: 'scim',
      baseUrl: sim.url,
      token: TOKEN,
      scimPath: '/api/scim/v2',
      allowInsecureHttp: true,
      pageSize: 10,
      ...over,
    }),
    { configDir: '/tmp' },
  );

beforeAll(async () => {
  // A page cap of 7 below the requested 10: the listing must follow what the server gives.
  sim = await startSimulator({ tokens: [{ token: TOKEN }], maxPageSize: 7 });
  const ids: string[] = [];
  for (let i = 0; i < N; i++) {
    const u = sim.store.createUser({
      schemas: [SCHEMA_USER, SCHEMA_ENTERPRISE_USER],
      userName: `u${i}@example.com`,
      ...(i % 2 === 0 ? { externalId: `hr-${i}` } : {}),
      name: { givenName: `Given${i}`, familyName: i === 3 ? 'Ñúñez' : `Family${i}` },
      emails: [{ value: `alt${i}@example.com` }, { value: `u${i}@example.com`, primary: true }],
      active: i % 10 !== 5,
      [SCHEMA_ENTERPRISE_USER]: { department: `dept-${i % 3}` },
    });
    ids.push(u.id);
  }
  sim.store.createGroup({
    schemas: [SCHEMA_GROUP],
    displayName: 'A',
    externalId: 'grp-a',
    members: [{ value: ids[0]! }, { value: ids[1]! }],
  });
  sim.store.createGroup({ schemas: [SCHEMA_GROUP], displayName: 'B', members: [{ value: ids[2]! }] });
});

afterAll(async () => {
  await sim?.close();
});

describe('SCIM group mapping', () => {
  it('flattens nested groups (the simulator, like the platform, has none), cuts cycles, counts unknown members', () => {
    const users = new Map([
      ['s1', 'E1'],
      ['s2', 'E2'],
      ['s3', 'E3'],
    ]);
    const g = (id: string, members: string[]) => ({
      schemas: [SCHEMA_GROUP],
      id,
      displayName: id.toUpperCase(),
      members: members.map((value) => ({ value })),
    });
    const r = mapScimGroups([g('a', ['s1', 'b']), g('b', ['s2', 'c']), g('c', ['s3', 'a', 'gone'])], users);
    expect(r.groups.map((x) => [x.externalId, [...x.members].sort()])).toEqual([
      ['a', ['E1', 'E2', 'E3']],
      ['b', ['E1', 'E2', 'E3']],
      ['c', ['E1', 'E2', 'E3']],
    ]);
    expect(r).toMatchObject({ membersOutsideScope: 1, groupsInCycles: 3 });
  });
});

describe('SCIM source against the simulator', () => {
  it('reads every user through the capped pages and maps them', async () => {
    const s = await source().read();
    expect(s.users).toHaveLength(N);
    expect(s.rejected).toEqual([]);
    const u0 = s.users.find((u) => u.userName === 'u0@example.com')!;
    expect(u0).toMatchObject({
      externalId: 'hr-0',
      givenName: 'Given0',
      familyName: 'Family0',
      emails: ['u0@example.com', 'alt0@example.com'],
      active: true,
    });
    expect(u0.attributes['department']).toBe('dept-0');
    const u1 = s.users.find((u) => u.userName === 'u1@example.com')!;
    const stored1 = sim.store.users().find((u) => u.userName === 'u1@example.com')!;
    expect(u1.externalId).toBe(stored1.id); // no externalId upstream: the source id is the stable key
    expect(
      s.users
        .filter((u) => !u.active)
        .map((u) => u.userName)
        .sort(),
    ).toEqual(
      Array.from({ length: N }, (_, i) => i)
        .filter((i) => i % 10 === 5)
        .map((i) => `u${i}@example.com`)
        .sort(),
    );
    expect(s.users.find((u) => u.userName === 'u3@example.com')?.familyName).toBe('Ñúñez');
    // Pages of 7 although 10 were asked for: the next page starts at the last resource received
    // (pages overlap by one, see platform/scim/paging.ts).
    expect(sim.requests.some((r) => r.path.endsWith('/Users') && r.query['startIndex'] === '7')).toBe(true);
  });

  it('translates group members from source ids to externalIds', async () => {
    const s = await source().read();
    const ext = (name: string): string => s.users.find((u) => u.userName === name)!.externalId;
    const groups = Object.fromEntries(s.groups.map((g) => [g.displayName, { id: g.externalId, members: [...g.members].sort() }]));
    expect(groups['A']).toEqual({ id: 'grp-a', members: [ext('u0@example.com'), ext('u1@example.com')].sort() });
    const storedB = sim.store.groups().find((g) => g.displayName === 'B')!;
    expect(groups['B']).toEqual({ id: storedB.id, members: [ext('u2@example.com')] });
  });

  it('a wrong token fails the read with the classified 401 message', async () => {
    const err = await source({ token: 'wrong' })
      .read()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SourceError);
    expect((err as SourceError).message).toMatch(/credential missing, malformed or expired \(HTTP 401\)/);
    expect((err as SourceError).message).not.toContain('wrong');
  });

  it('users read but groups refused: the whole read fails, no state without groups', async () => {
    sim.setFaults([{ kind: 'status', status: 400, method: 'GET', pathPrefix: '/api/scim/v2/Groups' }]);
    try {
      const err = await source()
        .read()
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SourceError);
      expect((err as Error).message).toMatch(/Groups.*rejected \(HTTP 400\)/);
    } finally {
      sim.setFaults([]);
    }
  });

  it('check() probes one page and reports the total', async () => {
    expect(await source().check()).toMatch(new RegExp(`readable, ${N} users; changes by meta.lastModified$`));
  });

  it('refuses plain http to a non-loopback host at validation', () => {
    const r = scimSourceSchema.safeParse({ type: 'scim', baseUrl: 'http://idp.example.com', token: 't', allowInsecureHttp: true });
    expect(r.success).toBe(false);
  });
});
