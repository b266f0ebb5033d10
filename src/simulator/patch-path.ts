/**
 * PATCH path grammar (RFC 7644 §3.5.2): [urn ":"] attr ["[" valFilter "]"] ["." subAttr],
 * or [urn ":"] attr "." subAttr. Attribute names match case-insensitively (RFC 7643 §2.1).
 */
import type { Filter } from 'scim2-parse-filter';
import { SCHEMA_GROUP, SCHEMA_USER } from '../platform/scim/types.ts';
import { badPath } from './scim-error.ts';
import { parseScimFilter } from './scim-filter.ts';

export interface PatchPath {
  /** Extension schema URN holding the attribute; undefined for core attributes. */
  urn?: string;
  attr: string;
  filter?: Filter;
  /** The raw filter text, for error messages and dialect checks. */
  filterText?: string;
  sub?: string;
}

const NAME = /^[A-Za-z$][\w$-]*/;

function splitUrn(path: string): { urn?: string; rest: string } {
  if (!/^urn:/i.test(path)) return { rest: path };
  const bracket = path.indexOf('[');
  const head = bracket === -1 ? path : path.slice(0, bracket);
  const colon = head.lastIndexOf(':');
  const urn = path.slice(0, colon);
  const rest = path.slice(colon + 1);
  const core = [SCHEMA_USER, SCHEMA_GROUP].find((s) => s.toLowerCase() === urn.toLowerCase());
  return core ? { rest } : { urn, rest };
}

/** Index of the `]` closing the filter opened at `open`, skipping quoted strings. */
function closingBracket(text: string, open: number): number {
  for (let i = open + 1; i < text.length; i++) {
    const ch = text[i];
    if (ch === '"') {
      for (i++; i < text.length && text[i] !== '"'; i += text[i] === '\\' ? 2 : 1);
    } else if (ch === ']') {
      return i;
    }
  }
  return -1;
}

export function parsePatchPath(path: string): PatchPath {
  const { urn, rest } = splitUrn(path.trim());
  const name = NAME.exec(rest);
  if (!name) throw badPath(`invalid path ${JSON.stringify(path)}`);
  const out: PatchPath = { attr: name[0], ...(urn ? { urn } : {}) };
  let tail = rest.slice(name[0].length);
  if (tail.startsWith('[')) {
    const close = closingBracket(tail, 0);
    if (close === -1) throw badPath(`unbalanced [ in path ${JSON.stringify(path)}`);
    out.filterText = tail.slice(1, close);
    try {
      out.filter = parseScimFilter(out.filterText);
    } catch {
      throw badPath(`invalid value filter in path ${JSON.stringify(path)}`);
    }
    tail = tail.slice(close + 1);
  }
  if (tail.startsWith('.')) {
    const sub = NAME.exec(tail.slice(1));
    if (!sub || sub[0].length !== tail.length - 1) throw badPath(`invalid sub-attribute in path ${JSON.stringify(path)}`);
    out.sub = sub[0];
    tail = '';
  }
  if (tail !== '') throw badPath(`invalid path ${JSON.stringify(path)}`);
  return out;
}

/** The existing key of `obj` matching `name` case-insensitively, else `name` itself. */
export function keyOf(obj: Record<string, unknown>, name: string): string {
  const lower = name.toLowerCase();
  for (const k of Object.keys(obj)) if (k.toLowerCase() === lower) return k;
  return name;
}
