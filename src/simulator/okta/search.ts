/**
 * The Okta `search` expression language as the simulator evaluates it: `attr op "value"`
 * with eq, sw, gt, ge, lt, le and `attr pr`, joined by `and` / `or` (and binds tighter)
 * and grouped with parentheses. Attributes are dotted paths into the object
 * (`status`, `lastUpdated`, `profile.department`, `type`). Timestamps compare as instants.
 */
export class SearchSyntaxError extends Error {}

type Node =
  | { kind: 'and' | 'or'; left: Node; right: Node }
  | { kind: 'cmp'; attr: string; op: string; value: string | number | boolean }
  | { kind: 'pr'; attr: string };

const TOKEN = /\s*(\(|\)|"(?:[^"\\]|\\.)*"|[^\s()]+)/y;

function tokenize(s: string): string[] {
  const out: string[] = [];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < s.length) {
    if (/^\s*$/.test(s.slice(TOKEN.lastIndex))) break;
    const m = TOKEN.exec(s);
    if (!m) throw new SearchSyntaxError(`cannot read the search expression at ${TOKEN.lastIndex}`);
    out.push(m[1] as string);
  }
  return out;
}

export function parseSearch(s: string): Node {
  const t = tokenize(s);
  let i = 0;
  const peek = (): string | undefined => t[i];
  const take = (): string => {
    const v = t[i++];
    if (v === undefined) throw new SearchSyntaxError('the search expression ends early');
    return v;
  };
  const term = (): Node => {
    if (peek() === '(') {
      take();
      const n = or();
      if (take() !== ')') throw new SearchSyntaxError('missing )');
      return n;
    }
    const attr = take();
    const op = take().toLowerCase();
    if (op === 'pr') return { kind: 'pr', attr };
    if (!['eq', 'sw', 'gt', 'ge', 'lt', 'le', 'ne'].includes(op)) throw new SearchSyntaxError(`unknown operator ${op}`);
    const raw = take();
    let value: string | number | boolean;
    if (raw.startsWith('"')) value = JSON.parse(raw) as string;
    else if (raw === 'true' || raw === 'false') value = raw === 'true';
    else if (/^-?\d+(\.\d+)?$/.test(raw)) value = Number(raw);
    else throw new SearchSyntaxError(`a value must be quoted: ${raw}`);
    return { kind: 'cmp', attr, op, value };
  };
  const and = (): Node => {
    let n = term();
    while (peek()?.toLowerCase() === 'and') {
      take();
      n = { kind: 'and', left: n, right: term() };
    }
    return n;
  };
  const or = (): Node => {
    let n = and();
    while (peek()?.toLowerCase() === 'or') {
      take();
      n = { kind: 'or', left: n, right: and() };
    }
    return n;
  };
  const n = or();
  if (i !== t.length) throw new SearchSyntaxError(`unexpected ${t[i]}`);
  return n;
}

function valueAt(o: unknown, path: string): unknown {
  let v: unknown = o;
  for (const k of path.split('.')) v = v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined;
  return v;
}

const ISO = /^\d{4}-\d{2}-\d{2}T/;

function compare(a: unknown, b: string | number | boolean): number | undefined {
  if (typeof a === 'string' && typeof b === 'string' && ISO.test(a) && ISO.test(b)) return Date.parse(a) - Date.parse(b);
  if (typeof a === 'string' && typeof b === 'string')
    return a.toLowerCase() < b.toLowerCase() ? -1 : a.toLowerCase() > b.toLowerCase() ? 1 : 0;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'boolean' && typeof b === 'boolean') return a === b ? 0 : 1;
  return undefined;
}

export function matches(n: Node, o: unknown): boolean {
  switch (n.kind) {
    case 'and':
      return matches(n.left, o) && matches(n.right, o);
    case 'or':
      return matches(n.left, o) || matches(n.right, o);
    case 'pr': {
      const v = valueAt(o, n.attr);
      return v !== undefined && v !== null && v !== '';
    }
    case 'cmp': {
      const v = valueAt(o, n.attr);
      if (n.op === 'sw') return typeof v === 'string' && typeof n.value === 'string' && v.toLowerCase().startsWith(n.value.toLowerCase());
      const c = compare(v, n.value);
      if (c === undefined) return n.op === 'ne';
      switch (n.op) {
        case 'eq':
          return c === 0;
        case 'ne':
          return c !== 0;
        case 'gt':
          return c > 0;
        case 'ge':
          return c >= 0;
        case 'lt':
          return c < 0;
        default:
          return c <= 0;
      }
    }
  }
}
