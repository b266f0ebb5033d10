import { describe, expect, it } from 'vitest';
import { andFilter, eqFilter, filterLiteral, orFilter, parseFilter, valuePath } from '../../src/platform/scim/filter.ts';
import { ErrorCodes } from '../../src/errors.ts';

const NASTY = 'o"brien\\x@example.com';

describe('SCIM filter building', () => {
  it('escapes " and \\ in values as JSON strings (RFC 7644)', () => {
    expect(eqFilter('userName', NASTY)).toBe('userName eq "o\\"brien\\\\x@example.com"');
  });

  it('round-trips awkward values through parseFilter', () => {
    for (const value of [NASTY, 'a and b', 'x) or (y', 'm[0]', 'tab\there', 'line\nbreak', 'ünïcødé ☃', '\\', '"', '']) {
      const ast = parseFilter(eqFilter('userName', value));
      expect(ast).toEqual({ op: 'eq', attrPath: 'userName', compValue: value });
    }
  });

  it('keeps non-string literals typed', () => {
    expect(filterLiteral(true)).toBe('true');
    expect(filterLiteral(null)).toBe('null');
    expect(filterLiteral(42)).toBe('42');
    expect(parseFilter(eqFilter('active', false))).toEqual({ op: 'eq', attrPath: 'active', compValue: false });
  });

  it('composes and/or with the parentheses precedence needs', () => {
    const f = andFilter(orFilter(eqFilter('userName', 'a'), eqFilter('userName', 'b')), eqFilter('active', true));
    expect(f).toBe('(userName eq "a" or userName eq "b") and active eq true');
    expect(parseFilter(f)).toEqual({
      op: 'and',
      filters: [
        {
          op: 'or',
          filters: [
            { op: 'eq', attrPath: 'userName', compValue: 'a' },
            { op: 'eq', attrPath: 'userName', compValue: 'b' },
          ],
        },
        { op: 'eq', attrPath: 'active', compValue: true },
      ],
    });
  });

  it('builds value paths for PATCH', () => {
    const path = valuePath('members', eqFilter('value', 'id"]x'));
    expect(path).toBe('members[value eq "id\\"]x"]');
    expect(parseFilter(path)).toEqual({ op: '[]', attrPath: 'members', valFilter: { op: 'eq', attrPath: 'value', compValue: 'id"]x' } });
  });

  it('rejects malformed filters with E_REJECTED', () => {
    for (const bad of ['userName eq "\\x"', 'userName eq', 'userName eq "a" and']) {
      expect(() => parseFilter(bad)).toThrow(expect.objectContaining({ code: ErrorCodes.REJECTED }));
    }
  });
});
