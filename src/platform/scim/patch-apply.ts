/**
 * Apply PATCH operations to a resource locally, for servers without PATCH: the client GETs
 * the resource, applies the operations here and PUTs the result. Covers the forms this tool
 * generates (RFC 7644 §3.5.2): add/replace/remove on simple and dotted paths, extension URN
 * paths, value-filtered paths of multi-valued attributes, `members` with a value array, and
 * a path-less add/replace with an object value.
 */
import { Tester } from 'scim2-parse-filter';
import { SCHEMA_ENTERPRISE_USER, SCHEMA_GROUP, SCHEMA_USER, type PatchOperation, type ScimResource } from './types.ts';
import { findKey, invalidPath, parseAttrPath, type AttrPath } from './attr-path.ts';
import type { Filter } from './filter.ts';

type Obj = Record<string, unknown>;

const CORE_SCHEMAS = [SCHEMA_USER, SCHEMA_GROUP].map((s) => s.toLowerCase());

/** A copy of `resource` with `ops` applied in order; the input is not modified. */
export function applyPatch<T extends ScimResource>(resource: T, ops: readonly PatchOperation[]): T {
  const out = structuredClone(resource);
  for (const op of ops) applyOne(out, op);
  return out;
}

function applyOne(res: ScimResource, op: PatchOperation): void {
  const kind = op.op.toLowerCase() as PatchOperation['op'];
  if (op.path === undefined || op.path === '') {
    if (kind === 'remove' || !isObj(op.value)) throw invalidPath('', `a path-less ${kind} needs an object value`);
    for (const [key, value] of Object.entries(op.value)) {
      if (isSchemaUrn(res, key) && isObj(value)) {
        // `{ "urn:…:enterprise:2.0:User": { "department": "x" } }`: each sub-attribute in turn.
        for (const [sub, v] of Object.entries(value)) applyPath(res, kind, `${key}:${sub}`, v);
      } else {
        applyPath(res, kind, key, value);
      }
    }
    return;
  }
  if (kind !== 'remove' && op.value === undefined) throw invalidPath(op.path, `${kind} needs a value`);
  applyPath(res, kind, op.path, op.value);
}

function applyPath(res: ScimResource, kind: PatchOperation['op'], path: string, value: unknown): void {
  const p = parseAttrPath(path);
  const container = containerOf(res, p, kind !== 'remove');
  if (container === undefined) return; // removing from an extension that is not there
  const key = findKey(container, p.attr);
  if (p.filter !== undefined) return applyFiltered(container, key, p, kind, value, path);
  if (p.sub !== undefined) {
    if (Array.isArray(container[key])) throw invalidPath(path, 'a sub-attribute of a multi-valued attribute needs a value filter');
    if (kind === 'remove') {
      const parent = container[key];
      if (isObj(parent)) delete parent[findKey(parent, p.sub)];
      return;
    }
    const parent = isObj(container[key]) ? (container[key] as Obj) : (container[key] = {} as Obj);
    return setValue(parent, findKey(parent, p.sub), kind, value);
  }
  if (kind === 'remove') return removeValue(container, key, value);
  setValue(container, key, kind, value);
}

/** The object holding the attribute: the resource itself, or its extension object. */
function containerOf(res: ScimResource, p: AttrPath, create: boolean): Obj | undefined {
  if (p.urn === undefined || CORE_SCHEMAS.includes(p.urn.toLowerCase())) return res;
  const key = findKey(res, p.urn);
  if (isObj(res[key])) return res[key] as Obj;
  if (!create) return undefined;
  const ext: Obj = {};
  res[key] = ext;
  if (!res.schemas.some((s) => s.toLowerCase() === p.urn!.toLowerCase())) res.schemas.push(p.urn);
  return ext;
}

function setValue(obj: Obj, key: string, kind: PatchOperation['op'], value: unknown): void {
  const existing = obj[key];
  if (kind === 'add' && (Array.isArray(existing) || Array.isArray(value))) {
    const list = Array.isArray(existing) ? existing : existing === undefined ? [] : [existing];
    for (const v of Array.isArray(value) ? value : [value]) if (!list.some((e) => sameValue(e, v))) list.push(v);
    obj[key] = list;
  } else if (isObj(existing) && isObj(value)) {
    // A complex attribute: named sub-attributes are replaced, the others kept (RFC 7644 §3.5.2.3).
    for (const [k, v] of Object.entries(value)) existing[findKey(existing, k)] = v;
  } else {
    obj[key] = value;
  }
}

function removeValue(obj: Obj, key: string, value: unknown): void {
  const existing = obj[key];
  if (value !== undefined && Array.isArray(existing)) {
    // `{op:'remove', path:'members', value:[{value:id}]}`: drop just those values.
    const drop = Array.isArray(value) ? value : [value];
    obj[key] = existing.filter((e) => !drop.some((d) => sameValue(e, d)));
    return;
  }
  // An emptied multi-valued attribute stays as []: a PUT that omits it may leave it untouched.
  if (Array.isArray(existing)) obj[key] = [];
  else delete obj[key];
}

function applyFiltered(container: Obj, key: string, p: AttrPath, kind: PatchOperation['op'], value: unknown, path: string): void {
  const list = container[key];
  if (list !== undefined && !Array.isArray(list)) throw invalidPath(path, 'a value filter needs a multi-valued attribute');
  const items = (list ?? []) as unknown[];
  const tester = new Tester();
  const matches = (e: unknown): boolean => tester.test(e, p.filter!);
  if (kind === 'remove') {
    if (p.sub === undefined) {
      container[key] = items.filter((e) => !matches(e));
    } else {
      for (const e of items) if (matches(e) && isObj(e)) delete e[findKey(e, p.sub)];
    }
    return;
  }
  let hit = false;
  for (let i = 0; i < items.length; i++) {
    const e = items[i];
    if (!matches(e)) continue;
    hit = true;
    if (p.sub === undefined) items[i] = value;
    else if (isObj(e)) e[findKey(e, p.sub)] = value;
  }
  if (hit) return;
  // No element matched: `emails[type eq "work"].value` creates the work e-mail, as IdPs expect.
  const seed = p.sub !== undefined ? equalities(p.filter!) : undefined;
  if (seed === undefined) throw invalidPath(path, 'no value matched the filter (noTarget)');
  container[key] = [...items, { ...seed, [p.sub!]: value }];
}

/** `a eq 1 and b eq "x"` → { a: 1, b: "x" }; undefined for anything else. */
function equalities(f: Filter): Obj | undefined {
  if (f.op === 'eq') return f.attrPath.includes('.') ? undefined : { [f.attrPath]: f.compValue };
  if (f.op !== 'and') return undefined;
  const out: Obj = {};
  for (const part of f.filters) {
    const e = equalities(part);
    if (e === undefined) return undefined;
    Object.assign(out, e);
  }
  return out;
}

/** Multi-valued entries are the same when their `value` matches, else when deeply equal. */
function sameValue(a: unknown, b: unknown): boolean {
  if (isObj(a) && isObj(b) && a['value'] !== undefined && b['value'] !== undefined) return a['value'] === b['value'];
  return JSON.stringify(a) === JSON.stringify(b);
}

function isSchemaUrn(res: ScimResource, key: string): boolean {
  const k = key.toLowerCase();
  return k === SCHEMA_ENTERPRISE_USER.toLowerCase() || res.schemas.some((s) => s.toLowerCase() === k);
}

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
