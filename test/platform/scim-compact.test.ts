import { describe, expect, it } from 'vitest';
import { comparedGroupAttributes, comparedUserAttributes } from '../../src/identity/mapping.ts';
import { compactGroup, compactUser, projection } from '../../src/platform/scim/compact.ts';
import type { ScimGroup, ScimUser } from '../../src/platform/scim/types.ts';

const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';

describe('compact forms of listed objects', () => {
  const user = {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:User', ENTERPRISE],
    id: 'u1',
    externalId: 'e1',
    UserName: 'Ana@Example.com',
    name: { givenName: 'Ana', familyName: 'Berg' },
    emails: [{ value: 'ana@example.com', primary: true, type: 'work' }],
    active: true,
    title: 'Engineer',
    nickName: 'an',
    [ENTERPRISE.toUpperCase()]: { department: 'Data' },
    meta: { resourceType: 'User' },
    groups: [{ value: 'g1' }],
  } as unknown as ScimUser;

  it('keeps id and the top-level attributes the mapping compares, matched case-insensitively', () => {
    const attrs = comparedUserAttributes({
      title: { from: 'title', createOnly: false },
      [`${ENTERPRISE}:department`]: { from: 'department', createOnly: false },
    });
    expect(attrs).toEqual(
      expect.arrayContaining(['userName', 'name', 'emails', 'active', 'externalId', 'displayName', 'title', ENTERPRISE]),
    );
    const slim = compactUser(user, projection(attrs)) as unknown as Record<string, unknown>;
    expect(Object.keys(slim).sort()).toEqual(
      ['UserName', 'active', 'emails', 'externalId', 'id', 'name', 'title', ENTERPRISE.toUpperCase()].sort(),
    );
    // values are the listed ones, not copies
    expect(slim['name']).toBe((user as Record<string, unknown>)['name']);
  });

  it('without a projection drops only the server bookkeeping', () => {
    const slim = compactUser(user) as unknown as Record<string, unknown>;
    expect(slim['meta']).toBeUndefined();
    expect(slim['groups']).toBeUndefined();
    expect(slim['nickName']).toBe('an');
  });

  it('groups keep members (value and type only) and the compared attributes', () => {
    const group = {
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'],
      id: 'g1',
      displayName: 'Data',
      externalId: 'ge1',
      description: 'not compared',
      members: [
        { value: 'u1', display: 'Ana', $ref: 'http://x/Users/u1' },
        { value: 'u2', type: 'User' },
      ],
      meta: { resourceType: 'Group' },
    } as unknown as ScimGroup;
    const slim = compactGroup(group, projection(comparedGroupAttributes({}))) as unknown as Record<string, unknown>;
    expect(slim).toEqual({ id: 'g1', displayName: 'Data', externalId: 'ge1', members: [{ value: 'u1' }, { value: 'u2', type: 'User' }] });
  });
});
