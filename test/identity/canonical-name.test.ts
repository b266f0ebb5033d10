import { describe, expect, it } from 'vitest';
import { foldCase, nameKey, nfc, sameName } from '../../src/identity/canonical-name.ts';

const NFC_JOSE = 'jos\u00e9@example.com';
const NFD_JOSE = 'jose\u0301@example.com';

describe('nameKey: one canonical form per name', () => {
  it('NFC and NFD spellings of josé are one name, and the key is in NFC', () => {
    expect(NFC_JOSE).not.toBe(NFD_JOSE);
    expect(nameKey(NFD_JOSE)).toBe(nameKey(NFC_JOSE));
    expect(nameKey(NFD_JOSE)).toBe(NFC_JOSE);
    expect(sameName('JOSÉ@Example.com', NFD_JOSE)).toBe(true);
  });

  it.each([
    ['Kelvin sign', '\u212Aurt@example.com', 'kurt@example.com'],
    ['sharp s', 'straße', 'STRASSE'],
    ['capital sharp s', '\u1E9Ee', 'sse'],
    ['final sigma', 'ΟΔΥΣΣΕΥΣ', 'οδυσσευς'],
    ['long s', '\u017Fam', 'sam'],
    ['ohm sign', '\u2126mega', 'ωmega'],
    ['angstrom sign (canonical)', '\u212Bngstr\u00f6m', '\u00e5ngstr\u00f6m'],
    ['ligature ff', '\uFB00', 'ff'],
    ['capital I with dot', '\u0130stanbul', 'i\u0307stanbul'],
    ['ypogegrammeni, composed and decomposed', '\u1FB3', '\u03B1\u0345'],
    ['Deseret (astral)', '\u{10400}', '\u{10428}'],
    ['Cherokee small and capital', '\uAB70', '\u13A0'],
    ['titlecase digraph', '\u01C5', '\u01C6'],
  ])('%s folds with its case partner', (_what, a, b) => {
    expect(nameKey(a)).toBe(nameKey(b));
  });

  it.each([
    ['dotless i is its own letter', 'ı', 'i'],
    ['compatibility forms are not folded (that is a warning, not a match)', '\uFF41', 'a'],
    ['accents matter', 'jose', 'josé'],
    ['i with dot above is not plain i', '\u0130', 'i'],
  ])('%s', (_what, a, b) => {
    expect(nameKey(a)).not.toBe(nameKey(b));
  });

  it('ASCII keys are plain lower case', () => {
    expect(nameKey('Alice.Smith@Example.COM')).toBe('alice.smith@example.com');
    expect(foldCase('ABC-123')).toBe('abc-123');
  });

  it('the fold is idempotent and closed under the case mappings, for every assigned code point', () => {
    const bad: string[] = [];
    for (let cp = 0; cp <= 0x10ffff; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      const c = String.fromCodePoint(cp);
      if (!/\p{L}|\p{M}|\p{N}|\p{S}/u.test(c)) continue;
      const k = nameKey(c);
      if (nameKey(k) !== k) bad.push(`U+${cp.toString(16)} not idempotent`);
      if (c === 'ı') continue; // its upper case is I, but it does not fold to i
      if (nameKey(c.toUpperCase()) !== k || nameKey(c.toLowerCase()) !== k) bad.push(`U+${cp.toString(16)} case partner differs`);
    }
    expect(bad).toEqual([]);
  });

  it('nfc gives the source text in NFC, case kept', () => {
    expect(nfc(NFD_JOSE.toUpperCase())).toBe('JOS\u00c9@EXAMPLE.COM');
    expect(nfc('Alice')).toBe('Alice');
  });
});
