/**
 * SCIM filter evaluation (RFC 7644 §3.4.2.2): parsed with scim2-parse-filter, evaluated with
 * its Tester made case-aware (RFC 7643: strings are caseExact=false except ids and
 * references), plus an index fast path so `userName eq "…"` on 100k users is O(1).
 */
import { Tester, parse, type Compare, type Filter } from 'scim2-parse-filter';
import { SCHEMA_USER, SCHEMA_GROUP, type ScimResource } from '../platform/scim/types.ts';
import type { ResourceCollection } from './collection.ts';
import { ScimHttpError } from './scim-error.ts';

type CompValue = Compare['compValue'];

/** Attribute paths compared case-sensitively; everything else is caseExact=false. */
const CASE_EXACT = new Set([
  'id',
  'externalid',
  'members.value',
  'members.$ref',
  'groups.value',
  'groups.$ref',
  'meta.version',
  'meta.location',
]);

// Private-use character: never produced by the substitution below for anything but our placeholders.
const MARK = '\uE000';

/**
 * The library's tokenizer mangles backslash escapes (`"a\\b"` comes out with two backslashes,
 * `"a\\"` fails), so string literals are lifted out with a JSON-exact scanner first, replaced
 * by plain placeholders, and put back into the parsed tree.
 */
function liftStrings(text: string): { text: string; strings: string[] } {
  const strings: string[] = [];
  let out = '';
  let i = 0;
  while (i < text.length) {
    const ch = text[i];
    if (ch !== '"') {
      out += ch;
      i++;
      continue;
    }
    let j = i + 1;
    while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
    if (j >= text.length) throw new ScimHttpError(400, 'unterminated string in filter', 'invalidFilter');
    const literal = text.slice(i, j + 1);
    try {
      strings.push(JSON.parse(literal) as string);
    } catch {
      throw new ScimHttpError(400, `invalid string literal ${literal} in filter`, 'invalidFilter');
    }
    out += `"${MARK}${strings.length - 1}"`;
    i = j + 1;
  }
  return { text: out, strings };
}

function stripCoreUrn(path: string): string {
  const lower = path.toLowerCase();
  for (const urn of [SCHEMA_USER, SCHEMA_GROUP]) {
    if (lower.startsWith(`${urn.toLowerCase()}:`)) return path.slice(urn.length + 1);
  }
  return path;
}

function restore(f: Filter, strings: string[]): Filter {
  switch (f.op) {
    case 'and':
    case 'or':
      return { op: f.op, filters: f.filters.map((c) => restore(c, strings)) };
    case 'not':
      return { op: 'not', filter: restore(f.filter, strings) };
    case '[]':
      return { op: '[]', attrPath: stripCoreUrn(f.attrPath), valFilter: restore(f.valFilter, strings) };
    case 'pr':
      return { op: 'pr', attrPath: stripCoreUrn(f.attrPath) };
    default: {
      const c = f as Compare;
      let v: CompValue = c.compValue;
      if (typeof v === 'string' && v.startsWith(MARK)) v = strings[Number(v.slice(1))] ?? v;
      return { op: c.op, attrPath: stripCoreUrn(c.attrPath), compValue: v };
    }
  }
}

export function parseScimFilter(text: string): Filter {
  const lifted = liftStrings(text);
  let ast: Filter;
  try {
    ast = parse(lifted.text);
  } catch (e) {
    throw new ScimHttpError(400, `invalid filter: ${(e as Error).message.replaceAll(MARK, '')}`, 'invalidFilter');
  }
  return restore(ast, lifted.strings);
}

type Ordered = string | number | boolean;

class CaseAwareTester extends Tester {
  private exact = false;
  private readonly prefix: string[] = [];
  /** The case-sensitive-eq quirk: every comparison case-exact. */
  private readonly allExact: boolean;

  constructor(allExact = false) {
    super();
    this.allExact = allExact;
  }

  override test(r: unknown, f: Filter): boolean {
    if (f.op === '[]') {
      this.prefix.push(f.attrPath.toLowerCase());
      try {
        return super.test(r, f);
      } finally {
        this.prefix.pop();
      }
    }
    if ('attrPath' in f) this.exact = this.allExact || CASE_EXACT.has([...this.prefix, f.attrPath.toLowerCase()].join('.'));
    return super.test(r, f);
  }

  private norm(x: unknown): unknown {
    return !this.exact && typeof x === 'string' ? x.toLowerCase() : x;
  }

  override pr(r: unknown): boolean {
    return r !== undefined && r !== null && r !== '' && !(Array.isArray(r) && r.length === 0);
  }
  override eq(r: unknown, v: CompValue): boolean {
    return this.norm(r) === this.norm(v);
  }
  override ne(r: unknown, v: CompValue): boolean {
    return this.norm(r) !== this.norm(v);
  }
  override gt(r: unknown, v: CompValue): boolean {
    return v !== null && (this.norm(r) as Ordered) > (this.norm(v) as Ordered);
  }
  override lt(r: unknown, v: CompValue): boolean {
    return v !== null && (this.norm(r) as Ordered) < (this.norm(v) as Ordered);
  }
  override ge(r: unknown, v: CompValue): boolean {
    return v !== null && (this.norm(r) as Ordered) >= (this.norm(v) as Ordered);
  }
  override le(r: unknown, v: CompValue): boolean {
    return v !== null && (this.norm(r) as Ordered) <= (this.norm(v) as Ordered);
  }
  override sw(r: unknown, v: CompValue): boolean {
    return v !== null && r !== null && r !== undefined && String(this.norm(r)).startsWith(String(this.norm(v)));
  }
  override ew(r: unknown, v: CompValue): boolean {
    return v !== null && r !== null && r !== undefined && String(this.norm(r)).endsWith(String(this.norm(v)));
  }
  override co(r: unknown, v: CompValue): boolean {
    if (v === null || r === null || r === undefined || typeof r === 'object') return false;
    return String(this.norm(r)).includes(String(this.norm(v)));
  }
}

export interface FilterRules {
  /** Compare every string case-exactly (the case-sensitive-eq quirk). */
  caseExact?: boolean;
}

export function compileFilter(f: Filter, rules: FilterRules = {}): (r: ScimResource) => boolean {
  const tester = new CaseAwareTester(rules.caseExact === true);
  return (r) => tester.test(r, f);
}

/** Resources that can possibly match, from the indexes; undefined when a full scan is needed. */
function candidates<T extends ScimResource>(f: Filter, col: ResourceCollection<T>): T[] | undefined {
  if (f.op === 'eq' && typeof f.compValue === 'string') {
    const attr = f.attrPath.toLowerCase();
    if (attr === 'id') {
      const r = col.get(f.compValue);
      return r ? [r] : [];
    }
    return col.lookup(attr, f.compValue);
  }
  if (f.op === 'and') {
    let best: T[] | undefined;
    for (const c of f.filters) {
      const found = candidates(c, col);
      if (found && (!best || found.length < best.length)) best = found;
    }
    return best;
  }
  if (f.op === 'or') {
    const union = new Map<string, T>();
    for (const c of f.filters) {
      const found = candidates(c, col);
      if (!found) return undefined;
      for (const r of found) union.set(r.id, r);
    }
    return [...union.values()];
  }
  return undefined;
}

/** All resources of `col` matching `filterText` (or all of them), in collection order. */
export function selectResources<T extends ScimResource>(
  col: ResourceCollection<T>,
  filterText: string | undefined,
  rules: FilterRules = {},
): readonly T[] {
  if (filterText === undefined || filterText.trim() === '') return col.all();
  const ast = parseScimFilter(filterText);
  const match = compileFilter(ast, rules);
  const cands = candidates(ast, col);
  if (cands) return col.sortInOrder(cands.filter(match));
  return col.all().filter(match);
}
