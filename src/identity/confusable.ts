/**
 * Names that can be read as another name (Unicode TS #39, a documented subset): a plan
 * warning, never a refusal, because real names legitimately use any script.
 *
 * No maintained npm package implements TS #39 (`unicode-confusables` is a 2018 0.1 without a
 * repository), so this checks three things with the platform's own Unicode data (Node's ICU,
 * Unicode property escapes in regular expressions), each testable on its own:
 * 1. Mixed script (TS #39 §5.1): each part of the name (the runs between separators such as
 *    `@ . - _` and spaces) must have a non-empty resolved script set: the intersection of the
 *    Script_Extensions of its letters, Common and Inherited counting as every script, and Han
 *    with Hiragana/Katakana, Bopomofo or Hangul counting as one (Japanese, Chinese, Korean).
 *    `pаypal` (Cyrillic а) is one part in two scripts.
 * 2. Whole-script look-alikes: a part in Cyrillic or Greek made only of letters that look
 *    like Latin ones (`соре` all Cyrillic) — a short table below, not all of confusables.txt.
 * 3. Compatibility characters: a name that NFKC changes (fullwidth `ａｄｍｉｎ`, `ﬁ`, math
 *    letters `𝐚`) reads as its NFKC form.
 * Limits: only the scripts listed in SCRIPTS are told apart; letters of any other script
 * count as one further script, "Other". Confusables within one script (`rn`/`m`, `l`/`I`)
 * and whole-script confusables other than Cyrillic/Greek against Latin are not detected.
 */

import { quote } from './text-rules.ts';

const SCRIPTS = [
  'Latin',
  'Greek',
  'Cyrillic',
  'Armenian',
  'Hebrew',
  'Arabic',
  'Syriac',
  'Thaana',
  'Nko',
  'Devanagari',
  'Bengali',
  'Gurmukhi',
  'Gujarati',
  'Oriya',
  'Tamil',
  'Telugu',
  'Kannada',
  'Malayalam',
  'Sinhala',
  'Thai',
  'Lao',
  'Tibetan',
  'Myanmar',
  'Georgian',
  'Hangul',
  'Ethiopic',
  'Cherokee',
  'Canadian_Aboriginal',
  'Ogham',
  'Runic',
  'Khmer',
  'Mongolian',
  'Hiragana',
  'Katakana',
  'Bopomofo',
  'Han',
  'Coptic',
  'Tifinagh',
  'Vai',
  'Lisu',
  'Osage',
  'Deseret',
  'Adlam',
] as const;
const SCRIPT_RES = SCRIPTS.map((name) => [name, new RegExp(`\\p{scx=${name}}`, 'u')] as const);
const COMMON = /[\p{scx=Zyyy}\p{scx=Zinh}]/u;
const PART = /[\p{L}\p{M}\p{N}]+/gu;
const ASCII = /^[\x00-\x7f]*$/;

/** Script_Extensions of one character among SCRIPTS (or "Other"); undefined for Common/Inherited. */
const cache = new Map<number, readonly string[] | undefined>();
function scriptsOf(c: string): readonly string[] | undefined {
  const cp = c.codePointAt(0) as number;
  if (cache.has(cp)) return cache.get(cp);
  let out: string[] | undefined;
  if (!COMMON.test(c)) {
    out = SCRIPT_RES.filter(([, re]) => re.test(c)).map(([name]) => name);
    if (out.length === 0) out = ['Other'];
    // Writing systems that mix scripts by design (TS #39 §5.1 "augmented" script sets).
    if (out.includes('Han')) out.push('Jpan', 'Hanb', 'Kore');
    if (out.includes('Hiragana') || out.includes('Katakana')) out.push('Jpan');
    if (out.includes('Bopomofo')) out.push('Hanb');
    if (out.includes('Hangul')) out.push('Kore');
  }
  if (cache.size < 10_000) cache.set(cp, out);
  return out;
}

/** The scripts a part's letters come from, when no one script (or writing system) covers them all. */
export function mixedScripts(part: string): string[] | undefined {
  let resolved: Set<string> | undefined;
  const seen = new Set<string>();
  for (const c of part) {
    const s = scriptsOf(c);
    if (s === undefined) continue;
    const first = s[0] as string;
    seen.add(first);
    resolved = resolved === undefined ? new Set(s) : new Set(s.filter((x) => (resolved as Set<string>).has(x)));
  }
  return resolved !== undefined && resolved.size === 0 ? [...seen].sort() : undefined;
}

/** Cyrillic and Greek letters that look like Latin ones, with the Latin they read as. */
const LOOK_ALIKE: Record<string, string> = {
  а: 'a',
  в: 'B',
  е: 'e',
  з: '3',
  к: 'K',
  м: 'M',
  н: 'H',
  о: 'o',
  р: 'p',
  с: 'c',
  т: 'T',
  у: 'y',
  х: 'x',
  і: 'i',
  ј: 'j',
  ѕ: 's',
  һ: 'h',
  ԁ: 'd',
  ԛ: 'q',
  ԝ: 'w',
  ӏ: 'l',
  ү: 'y',
  А: 'A',
  В: 'B',
  Е: 'E',
  К: 'K',
  М: 'M',
  Н: 'H',
  О: 'O',
  Р: 'P',
  С: 'C',
  Т: 'T',
  Х: 'X',
  І: 'I',
  Ј: 'J',
  Ѕ: 'S',
  Ү: 'Y',
  Ԁ: 'd',
  Ԛ: 'Q',
  Ԝ: 'W',
  Ӏ: 'l',
  α: 'a',
  ο: 'o',
  ν: 'v',
  ρ: 'p',
  τ: 't',
  υ: 'u',
  ι: 'i',
  κ: 'k',
  χ: 'x',
  ε: 'e',
  Α: 'A',
  Β: 'B',
  Ε: 'E',
  Ζ: 'Z',
  Η: 'H',
  Ι: 'I',
  Κ: 'K',
  Μ: 'M',
  Ν: 'N',
  Ο: 'O',
  Ρ: 'P',
  Τ: 'T',
  Υ: 'Y',
  Χ: 'X',
};

/** The Latin a Cyrillic or Greek part reads as, when every letter of it is a look-alike. */
export function latinLookAlike(part: string): string | undefined {
  if ([...part].length < 2) return undefined;
  let out = '';
  for (const c of part) {
    const l = LOOK_ALIKE[c];
    if (l === undefined) return undefined;
    out += l;
  }
  return out;
}

/** Why a name may be read as another name, or undefined. */
export function confusableReason(name: string): string | undefined {
  if (ASCII.test(name)) return undefined;
  const nfkc = name.normalize('NFKC');
  if (nfkc !== name.normalize('NFC')) return `contains compatibility characters and reads as ${quote(nfkc)}`;
  for (const [part] of name.matchAll(PART)) {
    const mixed = mixedScripts(part);
    if (mixed) return `${quote(part)} mixes scripts (${mixed.join(', ')})`;
  }
  for (const [part] of name.matchAll(PART)) {
    const latin = latinLookAlike(part);
    if (latin !== undefined) return `${quote(part)} is not Latin but reads as ${quote(latin)}`;
  }
  return undefined;
}
