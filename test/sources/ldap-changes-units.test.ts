/**
 * The LDAP change reader's pure parts: generalized time, the cursor's form and scope, where
 * changed entries are looked for, and nesting ancestors.
 */
import { describe, expect, it } from 'vitest';
import {
  cursorScope,
  decodeCursor,
  encodeCursor,
  formatGeneralizedTime,
  parseGeneralizedTime,
} from '../../src/sources/ldap/change-cursor.ts';
import { changeRoots } from '../../src/sources/ldap/changes.ts';
import { dnKey, inSearchScope } from '../../src/sources/ldap/dn.ts';
import { escapeFilterValue } from '../../src/sources/ldap/filter.ts';
import { CLOCK_RATE_MARGIN, ServerClock } from '../../src/sources/ldap/server-clock.ts';
import { ancestorGroups } from '../../src/sources/ldap/flatten.ts';
import { ldapSourceSchema, type LdapSourceInput } from '../../src/sources/ldap/schema.ts';
import { resolveLdapSettings } from '../../src/sources/ldap/settings.ts';

const base: LdapSourceInput = {
  type: 'ldap',
  url: 'ldaps://dc1.example.org',
  bindDn: 'cn=reader,dc=example,dc=org',
  bindPassword: 'x',
  users: { baseDn: 'ou=people,dc=example,dc=org' },
  groups: { baseDn: 'OU=Groups, DC=Example,DC=org' },
};
const settings = (over: Partial<LdapSourceInput> = {}) => resolveLdapSettings(ldapSourceSchema.parse({ ...base, ...over }));

describe('generalized time', () => {
  it('reads the forms directories answer with, in UTC', () => {
    expect(parseGeneralizedTime('20261128061500Z')).toBe(Date.UTC(2026, 10, 28, 6, 15, 0));
    expect(parseGeneralizedTime('20261128061500.0Z')).toBe(Date.UTC(2026, 10, 28, 6, 15, 0));
    expect(parseGeneralizedTime('20261128061500.25Z')).toBe(Date.UTC(2026, 10, 28, 6, 15, 0, 250));
    expect(parseGeneralizedTime('20261128071500+0100')).toBe(Date.UTC(2026, 10, 28, 6, 15, 0));
    expect(parseGeneralizedTime('yesterday')).toBeUndefined();
    expect(parseGeneralizedTime(undefined)).toBeUndefined();
  });

  it('writes whole seconds, so a filter never asks for a time the server cannot store', () => {
    expect(formatGeneralizedTime(Date.UTC(2026, 10, 28, 6, 15, 0, 999))).toBe('20261128061500Z');
    expect(parseGeneralizedTime(formatGeneralizedTime(Date.UTC(2001, 0, 2, 3, 4, 5)))).toBe(Date.UTC(2001, 0, 2, 3, 4, 5));
  });
});

describe('change cursor', () => {
  it('round-trips and refuses text of another form', () => {
    const c = { v: 1 as const, mechanism: 'usn' as const, scope: 'abc', usn: 42, dc: 'x' };
    expect(decodeCursor(encodeCursor(c))).toEqual({ ok: true, cursor: c });
    expect(decodeCursor('{"v":2}').ok).toBe(false);
    expect(decodeCursor('2026-11-28T06:15:00Z').ok).toBe(false);
  });

  it('its scope changes with the bases, filters or ids, not with timeouts', () => {
    const a = cursorScope(settings());
    expect(cursorScope(settings({ timeoutSeconds: 5 }))).toBe(a);
    expect(cursorScope(settings({ users: { baseDn: 'ou=staff,dc=example,dc=org' } }))).not.toBe(a);
    expect(cursorScope(settings({ users: { baseDn: 'ou=people,dc=example,dc=org', filter: '(uid=a*)' } }))).not.toBe(a);
  });
});

describe('change mechanism from the preset', () => {
  it('auto: USN for Active Directory, timestamps otherwise; off: none', () => {
    expect(settings({ preset: 'active-directory' }).changes.mechanism).toBe('usn');
    expect(settings().changes.mechanism).toBe('modify-timestamp');
    expect(settings({ changes: { mechanism: 'off' } }).changes.mechanism).toBeUndefined();
    expect(settings({ preset: 'active-directory', changes: { mechanism: 'modify-timestamp' } }).changes.mechanism).toBe('modify-timestamp');
  });
});

describe('where changed entries are looked for', () => {
  it('the naming context holding the bases, once', () => {
    expect(changeRoots(settings(), { namingContexts: ['dc=example,dc=org', 'cn=config'] })).toEqual(['dc=example,dc=org']);
  });

  it('the bases themselves without a naming context, the outer one when nested', () => {
    const s = settings({ users: { baseDn: ['ou=people,dc=example,dc=org', 'ou=a,ou=people,dc=example,dc=org'] }, groups: undefined });
    expect(changeRoots(s, { namingContexts: [] })).toEqual(['ou=people,dc=example,dc=org']);
  });

  it('changes.baseDn when configured', () => {
    expect(changeRoots(settings({ changes: { baseDn: 'dc=org' } }), { namingContexts: ['dc=example,dc=org'] })).toEqual(['dc=org']);
  });
});

describe('nesting ancestors', () => {
  it('every group a changed group is reached from, through cycles', () => {
    const nested = new Map([
      ['all', ['eng', 'ops']],
      ['eng', ['backend']],
      ['backend', ['eng']],
    ]);
    expect(ancestorGroups(nested, ['backend'])).toEqual(new Set(['eng', 'all', 'backend']));
    expect(ancestorGroups(nested, ['ops'])).toEqual(new Set(['all']));
    expect(ancestorGroups(nested, ['all'])).toEqual(new Set());
  });
});

describe('member lookups', () => {
  it('a DN is in a search scope by its key, an escaped comma separating nothing', () => {
    const base = dnKey('ou=People,dc=example,dc=org');
    expect(inSearchScope(dnKey('uid=a,ou=people,dc=example,dc=org'), base, 'one')).toBe(true);
    expect(inSearchScope(dnKey('uid=a,ou=x,ou=people,dc=example,dc=org'), base, 'one')).toBe(false);
    expect(inSearchScope(dnKey('uid=a,ou=x,ou=people,dc=example,dc=org'), base, 'sub')).toBe(true);
    expect(inSearchScope(dnKey('cn=a\\,ou=people,dc=example,dc=org'), base, 'sub')).toBe(false);
    expect(inSearchScope(dnKey('uid=a,ou=other,dc=example,dc=org'), base, 'sub')).toBe(false);
  });

  it('filter values escape the characters RFC 4515 reserves', () => {
    expect(escapeFilterValue('cn=a(b)*\\c,dc=org')).toBe('cn=a\\28b\\29\\2a\\5cc,dc=org');
  });
});

describe('the server clock a quiet directory is polled by', () => {
  it('knows nothing before an observation, then moves on with elapsed time, less the rate margin', () => {
    let mono = 1_000;
    const clock = new ServerClock(() => mono);
    expect(clock.lowerBound()).toBeUndefined();
    clock.observe(Date.UTC(2026, 10, 28, 9, 0, 0));
    mono += 60_000;
    expect(clock.lowerBound()).toBe(Date.UTC(2026, 10, 28, 9, 0, 0) + 60_000 * (1 - CLOCK_RATE_MARGIN));
    expect(clock.lowerBound()).toBeLessThan(Date.UTC(2026, 10, 28, 9, 1, 0));
  });

  it('an older stamp seen later never moves the bound back; a newer one moves it forward', () => {
    let mono = 0;
    const clock = new ServerClock(() => mono);
    const t0 = Date.UTC(2026, 10, 28, 9, 0, 0);
    clock.observe(t0);
    mono = 10_000;
    // A change replicated late (stamped before t0) says nothing new about the clock.
    clock.observe(t0 - 5_000);
    expect(clock.lowerBound()).toBeCloseTo(t0 + 10_000 * (1 - CLOCK_RATE_MARGIN), 6);
    clock.observe(t0 + 30_000);
    expect(clock.lowerBound()).toBe(t0 + 30_000);
  });

  it('a moment before the observation is bounded by the observation less the time between, plus the margin', () => {
    const clock = new ServerClock(() => 5_000);
    clock.observe(1_000_000);
    expect(clock.lowerBound(4_000)).toBe(1_000_000 - 1_000 * (1 + CLOCK_RATE_MARGIN));
    clock.reset();
    expect(clock.lowerBound()).toBeUndefined();
  });
});
