/** The basis of a saved plan: per object and attribute, what moved; member order and server bookkeeping are not a move. */
import { describe, expect, it } from 'vitest';
import { basisDrift, planBasis, touchedObjects, type PlanInputs } from '../../src/reconcile/plan-basis.ts';
import type { Plan } from '../../src/reconcile/plan-types.ts';
import type { ScimGroup, ScimUser } from '../../src/platform/scim/types.ts';

/** Platform objects as the listing keeps them (no `schemas`). */
const users = (list: object[]): ScimUser[] => list as ScimUser[];
const groups = (list: object[]): ScimGroup[] => list as ScimGroup[];

const plan = {
  users: {
    create: [{ externalId: 'u-3', userName: 'cid@example.com', resource: {} }],
    update: [{ id: 'p-1', externalId: 'u-1', userName: 'ann@example.com', changes: [], ops: [], adopt: false }],
    reactivate: [],
    deactivate: [{ id: 'p-2', externalId: 'u-2', userName: 'bob@example.com', reason: 'not-in-source' }],
    delete: [],
  },
  groups: { create: [], update: [], delete: [] },
  memberships: [{ group: { id: 'g-p', externalId: 'g-1', displayName: 'Sales' }, add: [], remove: [] }],
} as unknown as Plan;

const inputs = (over: Partial<PlanInputs> = {}): PlanInputs => ({
  sourceUsers: [
    { externalId: 'u-1', userName: 'ann@example.com', emails: [], active: true, attributes: { title: 'Eng' } },
    { externalId: 'u-3', userName: 'cid@example.com', emails: [], active: true, attributes: {} },
  ],
  sourceGroups: [{ externalId: 'g-1', displayName: 'Sales', members: ['u-1', 'u-3'] }],
  platformUsers: users([
    { id: 'p-1', userName: 'ann@example.com', displayName: 'Ann', name: { givenName: 'A', familyName: 'N' } },
    { id: 'p-2', userName: 'bob@example.com', active: true },
    { id: 'p-9', userName: 'untouched@example.com' },
  ]),
  platformGroups: groups([{ id: 'g-p', displayName: 'Sales', members: [{ value: 'p-1' }, { value: 'p-2' }] }]),
  ...over,
});

describe('plan basis', () => {
  it('covers exactly the objects the plan touches, on the platform and in the source; an absent one is null', () => {
    const basis = planBasis(plan, inputs());
    expect(Object.keys(basis).sort()).toEqual(
      [
        'platform:group:g-p',
        'platform:user:p-1',
        'platform:user:p-2',
        'source:group:g-1',
        'source:user:u-1',
        'source:user:u-2',
        'source:user:u-3',
      ].sort(),
    );
    expect(basis['source:user:u-2']).toBeNull();
    expect(Object.keys(basis['platform:user:p-1'] ?? {}).sort()).toEqual([
      'displayName',
      'id',
      'name.familyName',
      'name.givenName',
      'userName',
    ]);
    expect(touchedObjects(plan).get('platform:group:g-p')).toBe('group Sales');
  });

  it('names each object and attribute that moved; member order, meta and untouched objects are not a move', () => {
    const saved = planBasis(plan, inputs());
    const same = inputs({
      platformGroups: groups([
        { id: 'g-p', displayName: 'Sales', members: [{ value: 'p-2' }, { value: 'p-1' }], meta: { version: 'W/"2"' } },
      ]),
      sourceGroups: [{ externalId: 'g-1', displayName: 'Sales', members: ['u-3', 'u-1'] }],
      platformUsers: users([...inputs().platformUsers.slice(0, 2), { id: 'p-9', userName: 'renamed@example.com' }]),
    });
    expect(basisDrift(saved, planBasis(plan, same), touchedObjects(plan))).toEqual([]);

    const moved = inputs({
      platformUsers: users([
        { id: 'p-1', userName: 'ann@example.com', displayName: 'Ann (admin)', name: { givenName: 'A', familyName: 'N' } },
      ]),
      sourceUsers: [
        { externalId: 'u-1', userName: 'ann@example.com', emails: [], active: true, attributes: { title: 'Lead' } },
        { externalId: 'u-2', userName: 'bob@example.com', emails: [], active: true, attributes: {} },
      ],
    });
    expect(basisDrift(saved, planBasis(plan, moved), touchedObjects(plan)).sort()).toEqual([
      'user ann@example.com changed in the source since the plan (attributes.title)',
      'user ann@example.com changed on the platform since the plan (displayName)',
      'user bob@example.com appeared in the source since the plan',
      'user bob@example.com is gone on the platform since the plan',
      'user cid@example.com is gone in the source since the plan',
    ]);
  });
});
