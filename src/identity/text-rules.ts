/**
 * The rules every source's text passes (docs/sources.md, "Validation"): one place, one reason
 * text per rule, so an entry refused by one source is refused by all with the same words.
 * Each rule returns the reason, or undefined when the value passes. Values in reasons are
 * quoted with `quote`, which makes invisible and direction-changing characters visible.
 */

/** Longest userName, display name, given or family name (code points). */
export const MAX_NAME_LENGTH = 256;
/** Longest e-mail address (RFC 5321 §4.5.3.1.3, the forward path less its brackets). */
export const MAX_EMAIL_LENGTH = 254;
/** Longest local part of an address (RFC 5321 §4.5.3.1.1). */
export const MAX_LOCAL_PART_LENGTH = 64;
/** Longest externalId: ids are opaque, but not unbounded. */
export const MAX_ID_LENGTH = 1024;

const CONTROL = /[\p{Cc}\p{Zl}\p{Zp}]/u;
/** Explicit directional formatting (UAX #9): marks, embeddings, overrides, isolates. */
const BIDI = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/u;
/** Characters that render as nothing (zero-width space, joiners, soft hyphen, BOM, variation selectors…). */
const INVISIBLE = /\p{Default_Ignorable_Code_Point}/u;
const WHITE_SPACE = /\p{White_Space}/u;
/** Shown escaped in reasons: anything that is not a visible character or a plain space. */
const UNSAFE = /[\p{C}\p{Z}\p{Default_Ignorable_Code_Point}"\\]/gu;
const SHOWN = 80;

function codePoint(c: string): string {
  return `U+${(c.codePointAt(0) as number).toString(16).toUpperCase().padStart(4, '0')}`;
}

/** The value in double quotes, safe to print: control, format and space characters other than ' ' as \u{…}, cut at 80 characters. */
export function quote(value: string): string {
  const chars = [...value];
  const shown = chars.length > SHOWN ? `${chars.slice(0, SHOWN).join('')}` : value;
  const escaped = shown.replace(UNSAFE, (c) =>
    c === ' ' ? c : c === '"' || c === '\\' ? `\\${c}` : `\\u{${(c.codePointAt(0) as number).toString(16).toUpperCase()}}`,
  );
  return `"${escaped}${chars.length > SHOWN ? '…' : ''}"`;
}

function found(re: RegExp, value: string): string | undefined {
  const m = re.exec(value);
  return m ? codePoint(m[0]) : undefined;
}

/** Rules for every text field: no control characters, no line separators, no bidi formatting. */
export function textProblem(field: string, value: string): string | undefined {
  let cp = found(CONTROL, value);
  if (cp) return `${field} ${quote(value)}: contains a control character (${cp})`;
  cp = found(BIDI, value);
  if (cp) return `${field} ${quote(value)}: contains a bidirectional formatting character (${cp}), which can make it read as another name`;
  return undefined;
}

function lengthProblem(field: string, value: string, max: number): string | undefined {
  // Code points, not UTF-16 units: a name in an astral script is not shorter than it looks.
  if (value.length <= max) return undefined;
  const n = [...value].length;
  return n > max ? `${field} ${quote(value)}: longer than ${max} characters (${n})` : undefined;
}

/** A display name, given or family name, group name. */
export function nameProblem(field: string, value: string): string | undefined {
  return textProblem(field, value) ?? lengthProblem(field, value, MAX_NAME_LENGTH);
}

/** An externalId: opaque, so only the text rules and a bound. */
export function idProblem(field: string, value: string): string | undefined {
  return textProblem(field, value) ?? lengthProblem(field, value, MAX_ID_LENGTH);
}

/** Invisible characters and white space: two names that look the same must be the same name. */
function identifierProblem(field: string, value: string): string | undefined {
  const cp = found(INVISIBLE, value);
  if (cp) return `${field} ${quote(value)}: contains an invisible character (${cp}), which can make it read as another name`;
  const ws = found(WHITE_SPACE, value);
  if (ws) return `${field} ${quote(value)}: contains white space (${ws})`;
  return undefined;
}

/** A login name: the text rules, no invisible characters or white space, a length bound. */
export function userNameProblem(field: string, value: string): string | undefined {
  return textProblem(field, value) ?? identifierProblem(field, value) ?? lengthProblem(field, value, MAX_NAME_LENGTH);
}

/** Why `value` is not an address, in a few words, or undefined. Internationalized addresses (RFC 6531) pass. */
function addressDefect(value: string): string | undefined {
  const at = value.indexOf('@');
  if (at < 0) return 'no @';
  if (value.indexOf('@', at + 1) >= 0) return 'more than one @';
  const local = value.slice(0, at);
  const domain = value.slice(at + 1);
  if (local === '') return 'nothing before the @';
  if (domain === '') return 'nothing after the @';
  if (local.startsWith('.') || local.endsWith('.') || local.includes('..')) return 'a misplaced dot before the @';
  if ([...local].length > MAX_LOCAL_PART_LENGTH) return `more than ${MAX_LOCAL_PART_LENGTH} characters before the @`;
  const labels = domain.split('.');
  if (labels.length < 2) return 'no dot in the domain';
  if (labels.some((l) => l === '')) return 'an empty label in the domain';
  if (labels.some((l) => l.startsWith('-') || l.endsWith('-'))) return 'a domain label starting or ending with a hyphen';
  if (/[()<>[\]:;,"\\]/.test(domain)) return 'a character not allowed in a domain';
  return undefined;
}

/** An e-mail address: the text rules, no invisible characters or white space, RFC 5321 lengths, local@domain.tld. */
export function emailProblem(field: string, value: string): string | undefined {
  const text = textProblem(field, value);
  if (text) return text;
  const ws = found(WHITE_SPACE, value);
  if (ws) return `${field} ${quote(value)}: not an e-mail address (white space, ${ws}); expected one like alice@example.com`;
  const id = identifierProblem(field, value);
  if (id) return id;
  const defect = addressDefect(value);
  if (defect) return `${field} ${quote(value)}: not an e-mail address (${defect}); expected one like alice@example.com`;
  return lengthProblem(field, value, MAX_EMAIL_LENGTH);
}
