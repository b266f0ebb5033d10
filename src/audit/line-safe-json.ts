/**
 * JSON text that every line-splitting consumer reads as one line. JSON.stringify escapes the
 * C0 controls (so no raw LF, CR, VT, FF, FS, GS, RS) but leaves U+0085 (NEL), U+2028 (LINE
 * SEPARATOR) and U+2029 (PARAGRAPH SEPARATOR) raw, and Python's `splitlines`, JavaScript's
 * `.` in regexes, many log shippers and editors break lines there. Outside string literals
 * JSON is ASCII, so writing them as `\uXXXX` keeps the value and the document valid.
 */
const LINE_BREAKS = /[\u0085\u2028\u2029]/;
const LINE_BREAKS_ALL = /[\u0085\u2028\u2029]/g;

export function lineSafeJson(json: string): string {
  return LINE_BREAKS.test(json) ? json.replace(LINE_BREAKS_ALL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`) : json;
}
