import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/index.ts';
import { SCHEMA_ENTERPRISE_USER } from '../../src/platform/scim/types.ts';
import { q, scim } from './helpers.ts';

let sim: Simulator;
const ids: Record<string, string> = {};

beforeAll(async () => {
  sim = await startSimulator({ users: 300, seed: 7 });
  const add = (userName: string, extra: Record<string, unknown> = {}): void => {
    ids[userName] = sim.store.createUser({ userName, ...extra }).id;
  };
  add('o"brien\\x@example.com', { externalId: 'OB-1' });
  add('Mixed.Case@Example.com', {
    externalId: 'mc-1',
    displayName: 'Mixed Case',
    emails: [
      { value: 'Mixed.Case@Example.com', type: 'work' },
      { value: 'mc@home.example', type: 'home' },
    ],
  });
  add('dept@example.com', { [SCHEMA_ENTERPRISE_USER]: { department: 'Quantum Research' }, active: false });
});
afterAll(() => sim.close());

async function find(filter: string, path = '/Users'): Promise<{ status: number; names: string[]; body: Record<string, unknown> }> {
  const r = await scim(sim.url, 'GET', `${path}?${q(filter)}&count=100`);
  const resources = (r.body?.Resources ?? []) as Array<{ userName?: string; displayName?: string }>;
  return { status: r.status, names: resources.map((x) => x.userName ?? x.displayName ?? ''), body: r.body };
}

describe('SCIM filters', () => {
  it('matches a userName containing a double quote and a backslash', async () => {
    const r = await find('userName eq "o\\"brien\\\\x@example.com"');
    expect(r.status).toBe(200);
    expect(r.names).toEqual(['o"brien\\x@example.com']);
    expect(r.body['totalResults']).toBe(1);
  });

  it('compares userName and emails case-insensitively but externalId exactly', async () => {
    expect((await find('userName eq "mixed.case@example.COM"')).names).toEqual(['Mixed.Case@Example.com']);
    expect((await find('emails.value eq "MIXED.CASE@example.com"')).names).toEqual(['Mixed.Case@Example.com']);
    expect((await find('emails[type eq "HOME" and value co "@home"]')).names).toEqual(['Mixed.Case@Example.com']);
    expect((await find('externalId eq "OB-1"')).names).toEqual(['o"brien\\x@example.com']);
    expect((await find('externalId eq "ob-1"')).names).toEqual([]);
  });

  it('supports sw/co/pr/not, and/or, URN-qualified and extension attributes', async () => {
    expect((await find('userName sw "O\\"BRIEN"')).names).toEqual(['o"brien\\x@example.com']);
    expect((await find(`${SCHEMA_ENTERPRISE_USER}:department eq "quantum research"`)).names).toEqual(['dept@example.com']);
    expect((await find('urn:ietf:params:scim:schemas:core:2.0:User:userName eq "dept@example.com"')).names).toEqual(['dept@example.com']);
    expect((await find('userName eq "dept@example.com" or externalId eq "mc-1"')).names).toEqual([
      'Mixed.Case@Example.com',
      'dept@example.com',
    ]);
    const inactive = (await find('userName co "@example.com" and active eq false and not (userName sw "dept")')).names;
    expect(inactive.length).toBe(sim.store.users().filter((u) => u.active === false && !u.userName.startsWith('dept')).length);
    expect(inactive.length).toBeGreaterThan(0);
    expect(inactive).not.toContain('dept@example.com');
    expect((await find('displayName pr and userName eq "dept@example.com"')).names).toEqual([]);
  });

  it('agrees with a full scan for non-indexed filters over the seeded users', async () => {
    const expected = sim.store.users().filter((u) => u.active === false).length;
    expect(expected).toBeGreaterThan(0);
    const r = await scim(sim.url, 'GET', `/Users?${q('active eq false')}&count=0`);
    expect(r.body.totalResults).toBe(expected);
  });

  it('filters groups by displayName case-insensitively and by member value', async () => {
    const g = sim.store.groups()[0]!;
    const member = g.members![0]!.value;
    expect((await find(`displayName eq "${g.displayName.toUpperCase()}"`, '/Groups')).names).toEqual([g.displayName]);
    const byMember = await find(`members[value eq "${member}"]`, '/Groups');
    expect(byMember.names).toContain(g.displayName);
    expect(byMember.names.length).toBe(sim.store.groupIdsOf(member).length);
  });

  it('answers 400 invalidFilter to a malformed filter', async () => {
    for (const bad of ['userName eq', 'userName zz "x"', 'userName eq "unterminated', '(userName eq "x"']) {
      const r = await find(bad);
      expect(r.status, bad).toBe(400);
      expect(r.body['scimType']).toBe('invalidFilter');
    }
  });

  it('projects attributes and excludedAttributes', async () => {
    const g = sim.store.groups()[0]!;
    const ex = await scim(sim.url, 'GET', `/Groups?${q(`id eq "${g.id}"`)}&excludedAttributes=members`);
    expect(ex.body.Resources[0].members).toBeUndefined();
    expect(ex.body.Resources[0].displayName).toBe(g.displayName);
    const one = await scim(sim.url, 'GET', `/Users/${ids['dept@example.com']}?attributes=userName,${SCHEMA_ENTERPRISE_USER}:department`);
    expect(one.body).toEqual({
      schemas: expect.any(Array),
      id: ids['dept@example.com'],
      userName: 'dept@example.com',
      [SCHEMA_ENTERPRISE_USER]: { department: 'Quantum Research' },
    });
    // the stored resource is not affected by projections
    expect(sim.store.getUser(ids['dept@example.com']!)?.active).toBe(false);
  });
});
