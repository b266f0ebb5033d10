/**
 * The desired cache a source's deltas keep up to date: each delta leaves it equal to what a
 * complete read of the directory after the change would return (as sets), and its indexes
 * follow every change.
 */
import { describe, expect, it } from 'vitest';
import type { DesiredState, NormalizedUser, SourceRejection } from '../../../src/identity/model.ts';
import { applyDelta, DesiredCache, desiredLookup, mergeAffected } from '../../../src/reconcile/targeted/desired-cache.ts';
import type { SourceDelta } from '../../../src/sources/changes.ts';

const u = (ext: string, userName: string, extra: Partial<NormalizedUser> = {}): NormalizedUser => ({
  externalId: ext,
  userName,
  emails: [userName],
  active: true,
  attributes: {},
  ...extra,
});

function state(): DesiredState {
  return {
    users: [u('e-1', 'ana@x.io'), u('e-2', 'ben@x.io'), u('e-3', 'cy@x.io')],
    groups: [
      { externalId: 'g-1', displayName: 'Eng', members: ['e-1', 'e-2'] },
      { externalId: 'g-2', displayName: 'Sales', members: ['e-2', 'e-3'] },
    ],
    rejected: [],
    stats: {},
  };
}

function delta(
  d: Partial<{ upserted: NormalizedUser[]; removed: string[]; groups: SourceDelta['groups']; rejected: SourceRejection[] }>,
): SourceDelta {
  return {
    kind: 'delta',
    cursor: 'c',
    users: { upserted: d.upserted ?? [], removed: d.removed ?? [] },
    groups: d.groups ?? { upserted: [], removed: [] },
    rejected: d.rejected ?? [],
    changedAt: {},
  };
}

const userNames = (s: DesiredState): string[] => s.users.map((x) => x.userName).sort();
const members = (s: DesiredState, g: string): string[] => [...(s.groups.find((x) => x.externalId === g)?.members ?? [])].sort();

describe('desired cache', () => {
  it('a leaver removed from the source leaves every group it was in, and those groups are affected', () => {
    const cache = DesiredCache.from(state());
    const affected = applyDelta(cache, delta({ removed: ['e-2'] }));
    expect(affected).toEqual({ users: ['e-2'], groups: ['g-1', 'g-2'] });
    expect(userNames(cache.state)).toEqual(['ana@x.io', 'cy@x.io']);
    expect(members(cache.state, 'g-1')).toEqual(['e-1']);
    expect(members(cache.state, 'g-2')).toEqual(['e-3']);
    expect(cache.user('e-2')).toBeUndefined();
    expect(cache.user('e-3')?.userName).toBe('cy@x.io');
    expect(cache.groupsOf('e-2')).toEqual([]);
  });

  it('a rename moves the name index; the old name no longer names anyone', () => {
    const cache = DesiredCache.from(state());
    applyDelta(cache, delta({ upserted: [u('e-1', 'anna@x.io')] }));
    expect(cache.userByNameKey('anna@x.io')).toBe('e-1');
    expect(cache.userByNameKey('ana@x.io')).toBeUndefined();
  });

  it('a group upsert replaces the group and its members index', () => {
    const cache = DesiredCache.from(state());
    applyDelta(cache, delta({ groups: { upserted: [{ externalId: 'g-1', displayName: 'Engineering', members: ['e-3'] }], removed: [] } }));
    expect(cache.groupsOf('e-1')).toEqual([]);
    expect([...cache.groupsOf('e-3')].sort()).toEqual(['g-1', 'g-2']);
    expect(cache.groupByNameKey('eng')).toBeUndefined();
    expect(cache.groupByNameKey('engineering')).toBe('g-1');
  });

  it('a rejection replaces the valid entry and an earlier rejection of the same identity, and a valid upsert drops it', () => {
    const cache = DesiredCache.from(state());
    const first: SourceRejection = { kind: 'user', ref: 'users[0]', reason: 'bad e-mail', externalId: 'e-1', userName: 'ana@x.io' };
    const second: SourceRejection = { ...first, reason: 'bad e-mail again' };
    applyDelta(cache, delta({ rejected: [first] }));
    expect(cache.user('e-1')).toBeUndefined();
    applyDelta(cache, delta({ rejected: [second] }));
    expect(cache.state.rejected).toEqual([second]);
    applyDelta(cache, delta({ upserted: [u('e-1', 'ana@x.io')] }));
    expect(cache.state.rejected).toEqual([]);
    expect(cache.user('e-1')?.userName).toBe('ana@x.io');
  });

  it('changes coalesced for one run name each identity once', () => {
    expect(mergeAffected({ users: ['e-1', 'e-2'], groups: ['g-1'] }, { users: ['e-2'], groups: ['g-1', 'g-2'] })).toEqual({
      users: ['e-1', 'e-2'],
      groups: ['g-1', 'g-2'],
    });
  });

  it('the same delta twice leaves the same state as once', () => {
    const once = DesiredCache.from(state());
    const twice = DesiredCache.from(state());
    const d = delta({
      upserted: [u('e-4', 'dee@x.io')],
      removed: ['e-3'],
      groups: { upserted: [{ externalId: 'g-3', displayName: 'Ops', members: ['e-4'] }], removed: ['g-2'] },
    });
    applyDelta(once, d);
    applyDelta(twice, d);
    applyDelta(twice, d);
    expect(JSON.stringify(twice.state)).toBe(JSON.stringify(once.state));
  });

  it('updates in place, without copying the directory: the view is the same object and the original state is untouched', () => {
    const original = state();
    const cache = DesiredCache.from(original);
    const view = cache.state;
    const usersArray = view.users;
    applyDelta(cache, delta({ upserted: [u('e-9', 'new@x.io')], removed: ['e-1'] }));
    expect(cache.state).toBe(view);
    expect(cache.state.users).toBe(usersArray);
    expect(original.users.map((x) => x.externalId)).toEqual(['e-1', 'e-2', 'e-3']);
    expect(desiredLookup(view)).toBe(cache);
  });

  it('a delta on 100,000 users costs time for the change, not for the directory', () => {
    const big: DesiredState = { users: [], groups: [], rejected: [], stats: {} };
    for (let i = 0; i < 100_000; i++) big.users.push(u(`e-${i}`, `user${i}@x.io`));
    const building = performance.now();
    const cache = DesiredCache.from(big);
    const build = performance.now() - building;
    const started = performance.now();
    for (let i = 0; i < 1000; i++) applyDelta(cache, delta({ upserted: [u(`e-${i}`, `renamed${i}@x.io`)], removed: [`e-${50_000 + i}`] }));
    const perDelta = (performance.now() - started) / 1000;
    expect(cache.state.users.length).toBe(99_000);
    expect(cache.user('e-5')?.userName).toBe('renamed5@x.io');
    // Anything that touched every entry would cost about what indexing them all once did.
    expect(perDelta).toBeLessThan(build / 50);
  });
});
