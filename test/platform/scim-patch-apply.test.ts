import { describe, expect, it } from 'vitest';
import { applyPatch } from '../../src/platform/scim/patch-apply.ts';
import { applyMemberDelta, memberPatchRequests } from '../../src/platform/scim/members.ts';
import { SCHEMA_ENTERPRISE_USER, SCHEMA_GROUP, SCHEMA_USER, type ScimGroup, type ScimUser } from '../../src/platform/scim/types.ts';
import { ErrorCodes } from '../../src/errors.ts';

const ENT = SCHEMA_ENTERPRISE_USER;

function user(): ScimUser {
  return {
    schemas: [SCHEMA_USER],
    id: 'u1',
    userName: 'alice@example.com',
    name: { givenName: 'Alice', familyName: 'Smith' },
    emails: [{ value: 'alice@example.com', type: 'work', primary: true }],
    active: true,
    meta: { resourceType: 'User', version: 'W/"1"' },
  };
}

function group(members: string[]): ScimGroup {
  return { schemas: [SCHEMA_GROUP], id: 'g1', displayName: 'Eng', members: members.map((value) => ({ value, display: `d-${value}` })) };
}

describe('applyPatch (local PATCH for the PUT fallback)', () => {
  it('replaces simple and dotted attributes, matching names case-insensitively', () => {
    const out = applyPatch(user(), [
      { op: 'replace', path: 'active', value: false },
      { op: 'Replace' as 'replace', path: 'name.GivenName', value: 'Alicia' },
      { op: 'add', path: 'displayName', value: 'Alicia S' },
    ]);
    expect(out.active).toBe(false);
    expect(out.name).toEqual({ givenName: 'Alicia', familyName: 'Smith' });
    expect(out.displayName).toBe('Alicia S');
  });

  it('does not modify its input', () => {
    const input = user();
    applyPatch(input, [
      { op: 'replace', path: 'name.givenName', value: 'X' },
      { op: 'remove', path: 'emails' },
    ]);
    expect(input).toEqual(user());
  });

  it('writes extension URN paths into the extension object and declares the schema', () => {
    const out = applyPatch(user(), [
      { op: 'add', path: `${ENT}:department`, value: 'R&D' },
      { op: 'replace', path: `${ENT}:manager.value`, value: 'u9' },
    ]);
    expect(out[ENT]).toEqual({ department: 'R&D', manager: { value: 'u9' } });
    expect(out.schemas).toEqual([SCHEMA_USER, ENT]);
    const removed = applyPatch(out, [{ op: 'remove', path: `${ENT}:department` }]);
    expect(removed[ENT]).toEqual({ manager: { value: 'u9' } });
  });

  it('treats a core-schema URN path as a top-level attribute', () => {
    const out = applyPatch(user(), [{ op: 'replace', path: `${SCHEMA_USER}:userName`, value: 'alicia@example.com' }]);
    expect(out.userName).toBe('alicia@example.com');
    expect(out[SCHEMA_USER]).toBeUndefined();
  });

  it('path-less replace merges complex attributes and accepts extension objects and dotted keys', () => {
    const out = applyPatch(user(), [
      {
        op: 'replace',
        value: { active: false, name: { familyName: 'Jones' }, [ENT]: { department: 'Ops' }, 'name.formatted': 'Alice Jones' },
      },
    ]);
    expect(out.active).toBe(false);
    expect(out.name).toEqual({ givenName: 'Alice', familyName: 'Jones', formatted: 'Alice Jones' });
    expect(out[ENT]).toEqual({ department: 'Ops' });
  });

  it('replaces multi-valued attributes wholesale and supports value-filtered paths', () => {
    const out = applyPatch(user(), [{ op: 'replace', path: 'emails[type eq "work"].value', value: 'a.smith@example.com' }]);
    expect(out.emails).toEqual([{ value: 'a.smith@example.com', type: 'work', primary: true }]);
    const created = applyPatch(user(), [{ op: 'replace', path: 'emails[type eq "home"].value', value: 'home@example.com' }]);
    expect(created.emails).toHaveLength(2);
    expect(created.emails?.[1]).toEqual({ type: 'home', value: 'home@example.com' });
    const replaced = applyPatch(user(), [{ op: 'replace', path: 'emails', value: [{ value: 'b@example.com' }] }]);
    expect(replaced.emails).toEqual([{ value: 'b@example.com' }]);
  });

  it('handles both member removal dialects and de-duplicates member adds', () => {
    const g = group(['a', 'b', 'c']);
    expect(applyPatch(g, [{ op: 'remove', path: 'members[value eq "b"]' }]).members?.map((m) => m.value)).toEqual(['a', 'c']);
    expect(
      applyPatch(g, [{ op: 'remove', path: 'members', value: [{ value: 'a' }, { value: 'c' }] }]).members?.map((m) => m.value),
    ).toEqual(['b']);
    expect(applyPatch(g, [{ op: 'add', path: 'members', value: [{ value: 'c' }, { value: 'd' }] }]).members?.map((m) => m.value)).toEqual([
      'a',
      'b',
      'c',
      'd',
    ]);
    expect(applyPatch(g, [{ op: 'remove', path: 'members' }]).members).toEqual([]);
    expect(
      applyPatch(user(), [
        { op: 'remove', path: 'displayName' },
        { op: 'remove', path: 'name' },
      ]),
    ).not.toHaveProperty('name');
  });

  it('refuses what it cannot apply, with E_REJECTED', () => {
    const bad = expect.objectContaining({ code: ErrorCodes.REJECTED });
    expect(() => applyPatch(user(), [{ op: 'remove' }])).toThrow(bad);
    expect(() => applyPatch(user(), [{ op: 'replace', path: 'emails[value eq "none"]', value: {} }])).toThrow(bad);
    expect(() => applyPatch(user(), [{ op: 'replace', path: 'emails[type ne "work"].value', value: 'x' }])).toThrow(bad);
    expect(() => applyPatch(user(), [{ op: 'replace', path: 'emails.value', value: 'x' }])).toThrow(bad);
  });
});

describe('membership deltas', () => {
  const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

  it('chunks adds to maxMembersPerPatch values per request', () => {
    const reqs = memberPatchRequests(ids('u', 250), [], 'filter', 100);
    expect(reqs.map((ops) => ops.map((o) => (o.value as unknown[]).length))).toEqual([[100], [100], [50]]);
  });

  it('uses filtered remove paths or one value array, removals first, packed with adds', () => {
    const filter = memberPatchRequests(['n1', 'n2'], ['o"1', 'o2'], 'filter', 3);
    expect(filter).toEqual([
      [
        { op: 'remove', path: 'members[value eq "o\\"1"]' },
        { op: 'remove', path: 'members[value eq "o2"]' },
        { op: 'add', path: 'members', value: [{ value: 'n1' }] },
      ],
      [{ op: 'add', path: 'members', value: [{ value: 'n2' }] }],
    ]);
    const arr = memberPatchRequests(['n1'], ['o1', 'o2', 'o1'], 'value-array', 10);
    expect(arr).toEqual([
      [
        { op: 'remove', path: 'members', value: [{ value: 'o1' }, { value: 'o2' }] },
        { op: 'add', path: 'members', value: [{ value: 'n1' }] },
      ],
    ]);
  });

  it('computes the full member list for PUT, keeping existing entries', () => {
    const g = group(['a', 'b']);
    expect(applyMemberDelta(g.members, ['c', 'a', 'c'], ['b'])).toEqual([{ value: 'a', display: 'd-a' }, { value: 'c' }]);
    expect(applyMemberDelta(undefined, ['x'], [])).toEqual([{ value: 'x' }]);
  });
});
