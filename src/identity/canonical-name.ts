/**
 * One canonical form per name. userName, group displayName and e-mail addresses are compared
 * by `nameKey`: Unicode canonical caseless matching (Unicode §3.13, D145: NFD, full case
 * folding, NFD again), returned in NFC. So `josé` typed precomposed (NFC) and decomposed
 * (`jose` + U+0301, NFD) are one name, and so are `Straße`/`STRASSE`, the Kelvin sign
 * `K` (U+212A)/`k`, and final `ς`/`σ`/`Σ`.
 *
 * What is written to the platform is never the key: it is the source's own text in NFC
 * (`nfc`), so a name keeps its case and its letters.
 *
 * Full case folding without a table: no maintained npm package implements CaseFolding.txt
 * (`fold-case` and `@ar-nelson/foldcase` stopped at Unicode 7 and 12), so the fold is built
 * from the platform's own case mappings, which follow the Unicode version of Node's ICU:
 * lower, upper, lower again (ß → SS → ss; ẞ → ß → SS → ss), then final sigma to σ.
 * Against CaseFolding.txt, checked over every code point, this gives the same equivalence
 * classes with two known differences, both handled or harmless:
 * - U+0131 dotless ı has no folding (it is its own letter in Turkish, not a case of `i`);
 *   its upper case is `I`, so it is kept out of the round trip and stays itself.
 * - Cherokee folds to its capitals in CaseFolding.txt and to its small letters here: the
 *   same classes, another representative. Keys are compared, never shown, so this is fine.
 * Case folding is locale-free by definition: Turkish `I`/`ı` and `İ`/`i` are not special.
 */

const ASCII = /^[\x00-\x7f]*$/;
const DOTLESS_I = 'ı';

function roundTrip(s: string): string {
  return s.toLowerCase().toUpperCase().toLowerCase();
}

/** Unicode full case folding (CaseFolding.txt statuses C + F), as described above. */
export function foldCase(s: string): string {
  if (ASCII.test(s)) return s.toLowerCase();
  const folded = s.includes(DOTLESS_I) ? s.split(DOTLESS_I).map(roundTrip).join(DOTLESS_I) : roundTrip(s);
  return folded.replaceAll('ς', 'σ');
}

/** The source's text in NFC: what writes send, and what a plan shows. */
export function nfc(s: string): string {
  return ASCII.test(s) ? s : s.normalize('NFC');
}

/**
 * The comparison key of a userName, displayName or e-mail address: equal keys are one name.
 * Used by duplicate detection in every source, by matching, and by the platform listing index.
 */
export function nameKey(s: string): string {
  if (ASCII.test(s)) return s.toLowerCase();
  return foldCase(s.normalize('NFD')).normalize('NFC');
}

/** True when two names are one name under `nameKey`. */
export function sameName(a: string, b: string): boolean {
  return a === b || nameKey(a) === nameKey(b);
}
