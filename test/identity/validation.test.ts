import { describe, expect, it } from 'vitest';
import { confusableReason, latinLookAlike, mixedScripts } from '../../src/identity/confusable.ts';
import { DuplicateIndex } from '../../src/identity/duplicates.ts';
import type { NormalizedUser } from '../../src/identity/model.ts';
import { emailProblem, nameProblem, quote, userNameProblem } from '../../src/identity/text-rules.ts';
import { validateGroup, validateUser } from '../../src/identity/validate-user.ts';

const u = (over: Partial<NormalizedUser> = {}): NormalizedUser => ({
  externalId: 'e-1',
  userName: 'ada@example.com',
  emails: ['ada@example.com'],
  active: true,
  attributes: {},
  ...over,
});

describe('text rules', () => {
  it.each([
    ['kurt at ldap.example', 'not an e-mail address (white space, U+0020)'],
    ['cleo@@ldap', 'not an e-mail address (more than one @)'],
    ['no-at.example.com', 'not an e-mail address (no @)'],
    ['@example.com', 'not an e-mail address (nothing before the @)'],
    ['ada@', 'not an e-mail address (nothing after the @)'],
    ['ada@localhost', 'not an e-mail address (no dot in the domain)'],
    ['ada@example..com', 'not an e-mail address (an empty label in the domain)'],
    ['.ada@example.com', 'not an e-mail address (a misplaced dot before the @)'],
    ['ada@-example.com', 'not an e-mail address (a domain label starting or ending with a hyphen)'],
    [`${'a'.repeat(65)}@example.com`, 'not an e-mail address (more than 64 characters before the @)'],
    [`ada@${'d'.repeat(250)}.com`, 'longer than 254 characters (258)'],
    ['ada\u200B@example.com', 'contains an invisible character (U+200B)'],
    ['ada\u202E@example.com', 'contains a bidirectional formatting character (U+202E)'],
    ['ada\u0000@example.com', 'contains a control character (U+0000)'],
  ])('e-mail %j is refused: %s', (value, why) => {
    expect(emailProblem('emails', value)).toContain(why);
  });

  it.each([
    'ada@example.com',
    'jos\u00e9@b\u00fccher.example',
    '\u0438\u0432\u0430\u043d@\u043f\u0440\u0438\u043c\u0435\u0440.\u0440\u0444',
    'a+tag@sub.example.co.uk',
  ])('e-mail %j passes (internationalized addresses included)', (value) => {
    expect(emailProblem('emails', value)).toBeUndefined();
  });

  it('login names refuse white space and invisible characters; display names allow spaces and joiners', () => {
    expect(userNameProblem('userName', 'ada lovelace')).toBe('userName "ada lovelace": contains white space (U+0020)');
    expect(userNameProblem('userName', 'ada\u00A0lovelace')).toBe('userName "ada\\u{A0}lovelace": contains white space (U+00A0)');
    expect(userNameProblem('userName', 'ada\u00ADlovelace')).toContain('invisible character (U+00AD)');
    expect(nameProblem('displayName', 'Ada Lovelace')).toBeUndefined();
    expect(nameProblem('displayName', 'Mehr\u200Cdad')).toBeUndefined(); // ZWNJ is part of Persian spelling
    expect(nameProblem('displayName', 'a\u2028b')).toBe('displayName "a\\u{2028}b": contains a control character (U+2028)');
  });

  it('lengths count code points, not UTF-16 units', () => {
    const astral = '\u{10400}'.repeat(200); // 400 UTF-16 units, 200 characters
    expect(nameProblem('displayName', astral)).toBeUndefined();
    expect(nameProblem('displayName', 'x'.repeat(257))).toBe(`displayName "${'x'.repeat(80)}…": longer than 256 characters (257)`);
  });

  it('quote makes control, format and unusual space characters visible and escapes quotes', () => {
    expect(quote('a"b\\c\u202Ed\te\u00A0f g')).toBe('"a\\"b\\\\c\\u{202E}d\\u{9}e\\u{A0}f g"');
  });
});

describe('validateUser and validateGroup', () => {
  it('writes names and addresses in NFC and drops addresses that repeat under the canonical key', () => {
    const r = validateUser(
      u({
        userName: 'jose\u0301@example.com',
        displayName: 'Jose\u0301',
        emails: ['jose\u0301@example.com', 'JOS\u00c9@example.com', 'alt@example.com'],
        emailTypes: { 'jose\u0301@example.com': 'work' },
      }),
    );
    expect(r).toEqual({
      ok: true,
      value: u({
        userName: 'jos\u00e9@example.com',
        displayName: 'Jos\u00e9',
        emails: ['jos\u00e9@example.com', 'alt@example.com'],
        emailTypes: { 'jos\u00e9@example.com': 'work' },
      }),
    });
  });

  it('returns the same object when nothing changes', () => {
    const user = u();
    expect(validateUser(user)).toEqual({ ok: true, value: user });
    expect((validateUser(user) as { value: NormalizedUser }).value).toBe(user);
  });

  it('the first failing rule is the reason, in a fixed field order', () => {
    expect(validateUser(u({ userName: 'a b', emails: ['bad'] }))).toEqual({
      ok: false,
      reason: 'userName "a b": contains white space (U+0020)',
    });
    expect(validateUser(u({ givenName: 'x\u0007', displayName: 'y\u202E' }))).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^displayName/),
    });
  });

  it('a group name follows the display-name rules', () => {
    expect(validateGroup({ externalId: 'g', displayName: 'Ops\u202E' })).toMatchObject({
      ok: false,
      reason: expect.stringContaining('bidirectional'),
    });
    expect(validateGroup({ externalId: 'g', displayName: 'Cafe\u0301' })).toEqual({
      ok: true,
      value: { externalId: 'g', displayName: 'Caf\u00e9' },
    });
  });
});

describe('DuplicateIndex', () => {
  it('names the kept entry, and says when the spellings differ', () => {
    const kept = ['users[0]'];
    const index = new DuplicateIndex<number>('userName', (at) => ({ ref: kept[at] as string, name: 'Stra\u00dfe' }));
    index.add('e-1', 'Stra\u00dfe', 0);
    expect(index.reason('e-1', 'other')).toBe('duplicate externalId "e-1": already used by users[0]; the first entry is kept');
    expect(index.reason('e-2', 'Stra\u00dfe')).toBe('duplicate userName "Straße": already used by users[0]; the first entry is kept');
    expect(index.reason('e-2', 'STRASSE')).toBe(
      'duplicate userName "STRASSE" (the same name as "Straße" after Unicode normalization and case folding): already used by users[0]; the first entry is kept',
    );
    expect(index.reason('e-2', 'Strasse2')).toBeUndefined();
  });
});

describe('confusable names (TS #39 subset)', () => {
  it.each([
    ['p\u0430ypal@example.com', '"p\u0430ypal" mixes scripts (Cyrillic, Latin)'],
    ['\u03A9mega', '"\u03A9mega" mixes scripts (Greek, Latin)'],
    ['\u0441\u043e\u0440\u0435@example.com', '"\u0441\u043e\u0440\u0435" is not Latin but reads as "cope"'],
    ['\uFF41dmin@example.com', 'contains compatibility characters and reads as "admin@example.com"'],
    ['\u{1D41A}lice', 'contains compatibility characters and reads as "alice"'],
  ])('%j is reported: %s', (name, why) => {
    expect(confusableReason(name)).toBe(why);
  });

  it.each([
    'ada@example.com',
    'jos\u00e9@example.com',
    '\u0418\u0432\u0430\u043d \u041f\u0435\u0442\u0440\u043e\u0432',
    '\u0438\u0432\u0430\u043d@\u043f\u0440\u0438\u043c\u0435\u0440.\u0440\u0444',
    'ivan@\u043f\u0440\u0438\u043c\u0435\u0440.\u0440\u0444', // each part is one script
    '\u6771\u4eac\u30bf\u30ef\u30fc', // Han + Katakana: Japanese
    '\ud55c\uad6d\u8a9e', // Hangul + Han: Korean
    '\u1F08\u03B8\u1FC6\u03BD\u03B1\u03B9',
  ])('%j is not reported', (name) => {
    expect(confusableReason(name)).toBeUndefined();
  });

  it('digits and marks belong to every script; a lone look-alike letter is not a word', () => {
    expect(mixedScripts('\u0430123')).toBeUndefined();
    expect(latinLookAlike('\u043e')).toBeUndefined();
  });
});
