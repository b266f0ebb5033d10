/**
 * Partial responses (`fields=nextPageToken,users(id,primaryEmail,name/fullName)`), the
 * syntax Google APIs accept: comma-separated paths, `/` for sub-fields, `(…)` for a
 * sub-selection applied to every element of an array. An unknown syntax is a 400.
 */

export type FieldTree = Map<string, FieldTree | true>;

export class FieldSyntaxError extends Error {}

export function parseFields(spec: string): FieldTree {
  let i = 0;
  const parseList = (): FieldTree => {
    const tree: FieldTree = new Map();
    for (;;) {
      let name = '';
      while (i < spec.length && !',()'.includes(spec[i] as string)) name += spec[i++];
      name = name.trim();
      if (name === '') throw new FieldSyntaxError(`Invalid field selection ${spec}`);
      let sub: FieldTree | true = true;
      if (spec[i] === '(') {
        i++;
        sub = parseList();
        if (spec[i] !== ')') throw new FieldSyntaxError(`Invalid field selection ${spec}`);
        i++;
      }
      // `a/b/c` is `a(b(c))`.
      const segs = name.split('/');
      let node: FieldTree | true = sub;
      for (let k = segs.length - 1; k > 0; k--) node = new Map([[segs[k] as string, node]]);
      merge(tree, segs[0] as string, node);
      if (spec[i] === ',') {
        i++;
        continue;
      }
      return tree;
    }
  };
  const tree = parseList();
  if (i !== spec.length) throw new FieldSyntaxError(`Invalid field selection ${spec}`);
  return tree;
}

function merge(tree: FieldTree, key: string, node: FieldTree | true): void {
  const prev = tree.get(key);
  if (prev === true || node === true || prev === undefined) tree.set(key, prev === true || node === true ? true : node);
  else for (const [k, v] of node) merge(prev, k, v);
}

export function selectFields(value: unknown, tree: FieldTree): unknown {
  if (Array.isArray(value)) return value.map((v) => selectFields(v, tree));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, sub] of tree) {
    const v = (value as Record<string, unknown>)[key];
    if (v === undefined) continue;
    out[key] = sub === true ? v : selectFields(v, sub);
  }
  return out;
}
