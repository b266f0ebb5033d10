/**
 * SCIM filter building and parsing (RFC 7644 §3.4.2.2). Filters are built as an AST and
 * stringified, never concatenated by hand, so every value is escaped exactly once.
 *
 * scim2-parse-filter's `stringify` writes values with JSON.stringify, which is the escaping
 * RFC 7644 prescribes (a filter value is a JSON string). Its `parse`, however, doubles every
 * backslash not followed by `"` before decoding, so `"o\"brien\\x"` comes back as
 * `o"brien\\x`. `parseFilter` below decodes the literals itself and round-trips.
 */
import { parse, stringify, type Compare, type Filter } from 'scim2-parse-filter';
import { ErrorCodes, SyncError } from '../../errors.ts';

export type { Filter } from 'scim2-parse-filter';
export type FilterValue = string | number | boolean | null;

/** The escaped literal of one filter value, e.g. `"o\"brien\\x@example.com"`. */
export function filterLiteral(value: FilterValue): string {
  return stringify({ op: 'eq', attrPath: 'x', compValue: value }).slice('x eq '.length);
}

export function compare(attrPath: string, op: Compare['op'], value: FilterValue): Compare {
  return { op, attrPath, compValue: value };
}

/** `attr eq "value"`, escaped. */
export function eqFilter(attrPath: string, value: FilterValue): string {
  return stringify(compare(attrPath, 'eq', value));
}

/** `a and b …` from ASTs or already-built filter strings. */
export function andFilter(...parts: (Filter | string)[]): string {
  return stringify({ op: 'and', filters: parts.map(toAst) });
}

export function orFilter(...parts: (Filter | string)[]): string {
  return stringify({ op: 'or', filters: parts.map(toAst) });
}

/** A value path such as `members[value eq "id"]`, used as a PATCH path. */
export function valuePath(attrPath: string, filter: Filter | string): string {
  return stringify({ op: '[]', attrPath, valFilter: toAst(filter) });
}

function toAst(f: Filter | string): Filter {
  return typeof f === 'string' ? parseFilter(f) : f;
}

// A JSON string literal: quote, then any non-quote/non-backslash or an escape pair, then quote.
const LITERAL = /"(?:[^"\\]|\\.)*"/g;
const PLACEHOLDER = /^L(\d+)$/;

/**
 * Parse a filter into the scim2-parse-filter AST with correctly decoded string values.
 * Throws E_REJECTED with the reason for a malformed filter (e.g. an invalid escape).
 */
export function parseFilter(text: string): Filter {
  const literals: string[] = [];
  // Swap every string literal for a plain placeholder the library cannot mangle; since
  // all literals are swapped, every string value in the resulting AST is a placeholder.
  const masked = text.replace(LITERAL, (lit) => `"L${literals.push(lit) - 1}"`);
  let ast: Filter;
  try {
    ast = parse(masked);
  } catch (e) {
    throw new SyncError(ErrorCodes.REJECTED, 'rejected', `invalid SCIM filter: ${(e as Error).message}`, { cause: e });
  }
  return restore(ast, literals);
}

function restore(f: Filter, literals: string[]): Filter {
  switch (f.op) {
    case 'and':
    case 'or':
      return { op: f.op, filters: f.filters.map((x) => restore(x, literals)) };
    case 'not':
      return { op: 'not', filter: restore(f.filter, literals) };
    case '[]':
      return { op: '[]', attrPath: f.attrPath, valFilter: restore(f.valFilter, literals) };
    case 'pr':
      return f;
    default: {
      if (typeof f.compValue !== 'string') return f;
      const index = PLACEHOLDER.exec(f.compValue)?.[1];
      const literal = index === undefined ? undefined : literals[Number(index)];
      if (literal === undefined) return f;
      let value: unknown;
      try {
        value = JSON.parse(literal);
      } catch {
        throw new SyncError(ErrorCodes.REJECTED, 'rejected', `invalid SCIM filter: bad escape in ${literal.slice(0, 40)}`);
      }
      return { ...f, compValue: value as string };
    }
  }
}
