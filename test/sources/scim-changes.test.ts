/**
 * SCIM source change detection over real sockets: against the platform simulator (which
 * filters on meta.lastModified) a user edited or a member added shows up in the next
 * changes() and nothing else does; a server whose ServiceProviderConfig says it cannot
 * filter (a plain HTTP server here) has no change mechanism and is read in full.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCHEMA_GROUP, SCHEMA_LIST, SCHEMA_USER } from '../../src/platform/scim/types.ts';
import { supportsChanges, type SourceChanges, type SourceDelta } from '../../src/sources/changes.ts';
import { scimSourceSchema } from '../../src/sources/scim/schema.ts';
import { ScimSource } from '../../src/sources/scim/source.ts';
import { startSimulator, type Simulator } from '../../src/simulator/index.ts';

const TOKEN = 'scim-changes-token';
let sim: Simulator;
let plain: Server;
let plainUrl = '';
const ids: string[] = [];

const source = (baseUrl: string, scimPath = '/api/scim/v2'): ScimSource =>
  new ScimSource(scimSourceSchema.parse({ type: 'scim', baseUrl, token: TOKEN, scimPath, allowInsecureHttp: true, pageSize: 50 }), {
    configDir: '/tmp',
  });

function delta(r: SourceChanges): SourceDelta {
  if (r.kind !== 'delta') throw new Error(`expected a delta, got a full read (${r.reason}: ${r.detail ?? ''})`);
  return r;
}

beforeAll(async () => {
  sim = await startSimulator({ tokens: [{ token: TOKEN }] });
  for (let i = 0; i < 20; i++)
    ids.push(sim.store.createUser({ schemas: [SCHEMA_USER], userName: `u${i}@example.com`, externalId: `hr-${i}`, active: true }).id);
  sim.store.createGroup({ schemas: [SCHEMA_GROUP], displayName: 'Eng', externalId: 'grp-eng', members: [{ value: ids[0]! }] });
  // A SCIM server that lists users but says it cannot filter.
  plain = createServer((req, res) => {
    res.setHeader('content-type', 'application/scim+json');
    if (req.url?.startsWith('/scim/v2/ServiceProviderConfig')) {
      res.end(JSON.stringify({ patch: { supported: true }, filter: { supported: false, maxResults: 0 }, bulk: { supported: false } }));
      return;
    }
    if (req.url?.startsWith('/scim/v2/Users')) {
      const Resources = [{ schemas: [SCHEMA_USER], id: 'p1', userName: 'solo@example.com', active: true }];
      res.end(JSON.stringify({ schemas: [SCHEMA_LIST], totalResults: 1, itemsPerPage: 1, startIndex: 1, Resources }));
      return;
    }
    res.end(JSON.stringify({ schemas: [SCHEMA_LIST], totalResults: 0, itemsPerPage: 0, startIndex: 1, Resources: [] }));
  });
  await new Promise<void>((r) => plain.listen(0, '127.0.0.1', r));
  plainUrl = `http://127.0.0.1:${(plain.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await sim?.close();
  await new Promise((r) => plain?.close(r));
});

describe('SCIM source change detection (meta.lastModified gt)', () => {
  const s = () => shared;
  let shared: ScimSource;
  let cursor = '';

  it('the first call discovers the filter, reads in full and hands out a cursor', async () => {
    shared = source(sim.url);
    const r = await s().changes(undefined);
    expect(r).toMatchObject({ kind: 'full', reason: 'no cursor' });
    if (r.kind !== 'full') return;
    expect(r.state.users).toHaveLength(20);
    expect(s().changeMechanism()?.name).toBe('scim-last-modified');
    expect(supportsChanges(s())).toBe(true);
    const probe = sim.requests.find((q) => (q.query['filter'] ?? '').includes('meta.lastModified gt'));
    expect(probe).toBeDefined();
    cursor = r.cursor;
    // The first cursor reaches back (clock skew): drain what it finds once.
    cursor = delta(await s().changes(cursor)).cursor;
  });

  it('nothing changed: an empty delta and the same cursor', async () => {
    const r = delta(await s().changes(cursor));
    expect(r.users.upserted).toEqual([]);
    expect(r.groups.upserted).toEqual([]);
    expect(r.cursor).toBe(cursor);
  });

  it('a user deactivated and a member added to Eng show up in the next changes(), nothing else', async () => {
    await new Promise((r) => setTimeout(r, 20));
    sim.store.updateUser(ids[5]!, { active: false });
    const eng = sim.store.getGroupByDisplayName('Eng')!;
    sim.store.updateGroup(eng.id, { members: [{ value: ids[0]! }, { value: ids[7]! }] });
    const r = delta(await s().changes(cursor));
    expect(r.users.upserted.map((u) => [u.externalId, u.active])).toEqual([['hr-5', false]]);
    expect(r.groups.upserted).toEqual([{ externalId: 'grp-eng', displayName: 'Eng', members: ['hr-0', 'hr-7'] }]);
    expect(r.changedAt['hr-5']).toBeGreaterThan(0);
    const filtered = sim.requests.filter((q) => (q.query['filter'] ?? '').includes('meta.lastModified gt'));
    expect(filtered.length).toBeGreaterThanOrEqual(2);
    expect(Date.parse(JSON.parse(r.cursor).since)).toBeGreaterThan(Date.parse(JSON.parse(cursor).since));
    // Re-queried within the overlap, but not reported twice.
    const again = delta(await s().changes(r.cursor));
    expect(again.users.upserted).toEqual([]);
    expect(again.groups.upserted).toEqual([]);
    cursor = again.cursor;
  });

  it('a deleted user is not seen (the documented blind spot)', async () => {
    sim.store.deleteUser(ids[9]!);
    const r = delta(await s().changes(cursor));
    expect(r.users.removed).toEqual([]);
    expect(s().changeMechanism()?.blindSpots.join(' ')).toMatch(/deleted/);
  });

  it('a group member that is not known to the last read is read by id', async () => {
    const restarted = source(sim.url);
    const fresh = sim.store.createUser({ schemas: [SCHEMA_USER], userName: 'late@example.com', externalId: 'hr-late', active: true });
    await restarted.read();
    const eng = sim.store.getGroupByDisplayName('Eng')!;
    await new Promise((r) => setTimeout(r, 20));
    sim.store.updateGroup(eng.id, { members: [{ value: ids[0]! }, { value: fresh.id }] });
    const r = delta(await restarted.changes(cursor));
    expect(r.groups.upserted).toEqual([{ externalId: 'grp-eng', displayName: 'Eng', members: ['hr-0', 'hr-late'] }]);
  });
});

describe('a SCIM server without filter support', () => {
  it('has no change mechanism once discovered, and changes() reads in full', async () => {
    const s = source(plainUrl, '/scim/v2');
    expect(await s.check()).toMatch(/no change filter/);
    expect(s.changeMechanism()).toBeUndefined();
    expect(supportsChanges(s)).toBe(false);
    const r = await s.changes(undefined);
    expect(r).toMatchObject({ kind: 'full', reason: 'mechanism unavailable' });
    if (r.kind === 'full') expect(r.state.users.map((u) => u.userName)).toEqual(['solo@example.com']);
  });
});
