/**
 * diffDesired's promise, as a property: applying the delta between two reads to the first
 * read gives the second (users and groups as sets, member order ignored), and a delta names
 * nothing that did not change. Plus the rule that a user who turned invalid is not removed.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { NormalizedGroup, NormalizedUser, SourceRejection } from '../../src/identity/model.ts';
import type { SourceDelta } from '../../src/sources/changes.ts';
import { diffDesired } from '../../src/sources/diff.ts';

type State = { users: NormalizedUser[]; groups: NormalizedGroup[]; rejected: SourceRejection[] };

const ids = ['u1', 'u2', 'u3', 'u4', 'u5'];
const user = fc.record({
  externalId: fc.constantFrom(...ids),
  userName: fc.constantFrom('a@x', 'b@x', 'c@x'),
  active: fc.boolean(),
  title: fc.constantFrom('Engineer', 'Analyst'),
});
const group = fc.record({
  externalId: fc.constantFrom('g1', 'g2', 'g3'),
  displayName: fc.constantFrom('Eng', 'Ops'),
  members: fc.subarray(ids),
});
const state: fc.Arbitrary<State> = fc
  .record({ users: fc.array(user, { maxLength: 5 }), groups: fc.array(group, { maxLength: 3 }) })
  .map((s) => ({
    users: [...new Map(s.users.map((u) => [u.externalId, u])).values()].map((u) => ({
      externalId: u.externalId,
      userName: u.userName,
      emails: [u.userName],
      active: u.active,
      attributes: { title: u.title },
    })),
    groups: [...new Map(s.groups.map((g) => [g.externalId, g])).values()],
    rejected: [],
  }));

function apply(prev: State, d: SourceDelta): State {
  const users = new Map(prev.users.map((u) => [u.externalId, u]));
  for (const id of d.users.removed) users.delete(id);
  for (const u of d.users.upserted) users.set(u.externalId, u);
  const groups = new Map(prev.groups.map((g) => [g.externalId, g]));
  for (const id of d.groups.removed) groups.delete(id);
  for (const g of d.groups.upserted) groups.set(g.externalId, g);
  return { users: [...users.values()], groups: [...groups.values()], rejected: [] };
}

const canonical = (s: State): unknown => ({
  users: [...s.users].sort((a, b) => a.externalId.localeCompare(b.externalId)),
  groups: [...s.groups].map((g) => ({ ...g, members: [...g.members].sort() })).sort((a, b) => a.externalId.localeCompare(b.externalId)),
});

describe('diffDesired', () => {
  it('applying the delta to the previous read gives the next read; an unchanged record is never named', () => {
    fc.assert(
      fc.property(state, state, (prev, next) => {
        const d = diffDesired(prev, next, { cursor: 'c' });
        expect(canonical(apply(prev, d))).toEqual(canonical(next));
        const before = new Map(prev.users.map((u) => [u.externalId, u]));
        for (const u of d.users.upserted) expect(before.get(u.externalId)).not.toEqual(u);
        expect(diffDesired(next, next, { cursor: 'c' })).toMatchObject({
          users: { upserted: [], removed: [] },
          groups: { upserted: [], removed: [] },
        });
      }),
      { numRuns: 300 },
    );
  });

  it('a user who turned invalid is reported as a rejection, not removed', () => {
    const prev: State = {
      users: [{ externalId: 'u1', userName: 'a@x', emails: [], active: true, attributes: {} }],
      groups: [],
      rejected: [],
    };
    const rejection: SourceRejection = { kind: 'user', ref: 'row 2', reason: 'invalid userName', externalId: 'u1' };
    const d = diffDesired(prev, { users: [], groups: [], rejected: [rejection] }, { cursor: 'c', changedAtMs: 1000 });
    expect(d.users.removed).toEqual([]);
    expect(d.rejected).toEqual([rejection]);
    expect(d.changedAt).toEqual({ u1: 1000 });
    // The same rejection in both reads is no change.
    expect(
      diffDesired({ ...prev, users: [], rejected: [rejection] }, { users: [], groups: [], rejected: [rejection] }, { cursor: 'c' })
        .rejected,
    ).toEqual([]);
  });
});
