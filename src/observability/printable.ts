/**
 * Values from outside (a userName, a displayName, a server's error detail) shown to a person.
 * A terminal obeys control characters: `\e]0;…\a` retitles the window, `\e[2J` clears it, a CR
 * or LF inside a name starts a line of its own in a plan the operator reviews, and a bidi
 * override reorders what is read. `printable()` turns each such character into visible text
 * (`\x1b`, `\r`, `\u202e`) so data can never format, move or fake output. Every human-readable
 * renderer uses it on every value it did not write itself; JSON output stays exact.
 *
 * Escaped: C0 controls (U+0000–U+001F, tab and newline included), DEL and C1 controls
 * (U+007F–U+009F, NEL U+0085 among them), the line and paragraph separators U+2028/U+2029,
 * and the bidi controls U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069.
 * A backslash is left as it is (LDAP DNs are full of them): the escapes are for reading.
 */

const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/g;
const HAS_UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/;

const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function escapeOne(c: string): string {
  const named = NAMED[c];
  if (named !== undefined) return named;
  const code = c.charCodeAt(0);
  return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/** The text with every control, separator and bidi character shown as an escape. */
export function printable(text: string): string {
  return HAS_UNSAFE.test(text) ? text.replace(UNSAFE, escapeOne) : text;
}

/** Whether printable() would change the text. */
export function hasUnprintable(text: string): boolean {
  return HAS_UNSAFE.test(text);
}

/** Any value as one safe line: strings as they are (escaped), everything else as JSON (escaped). */
export function printableValue(value: unknown): string {
  if (typeof value === 'string') return printable(value);
  if (value === undefined) return '';
  return printable(JSON.stringify(value) ?? String(value));
}
