/**
 * RFC 7644 §3.5.2 PATCH applied to a copy of a resource; the store then validates and
 * commits the result like a PUT, so PATCH can never leave a resource half-changed.
 */
import type { Compare } from 'scim2-parse-filter';
import { SCHEMA_PATCH } from '../platform/scim/types.ts';
import { ScimHttpError, badPath, badValue } from './scim-error.ts';
import { compileFilter } from './scim-filter.ts';
import { keyOf, parsePatchPath, type PatchPath } from './patch-path.ts';

export interface PatchContext {
  resourceType: 'User' | 'Group';
  /** Which member-remove forms are accepted; a refused form is 400 invalidPath. */
  memberRemoveDialect: 'filter' | 'value-array' | 'both';
  maxOperationsPerPatch?: number;
}

type Json = Record<string, unknown>;
type Op = 'add' | 'replace' | 'remove';

const READ_ONLY: Record<PatchContext['resourceType'], string[]> = { User: ['id', 'meta', 'groups'], Group: ['id', 'meta'] };

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function sameValue(a: unknown, b: unknown): boolean {
  if (isObject(a) && isObject(b) && 'value' in a && 'value' in b) return a['value'] === b['value'];
  return JSON.stringify(a) === JSON.stringify(b);
}

interface RawOp {
  op: Op;
  path: string | undefined;
  value: unknown;
}

function readOperations(body: unknown): RawOp[] {
  if (!isObject(body)) throw new ScimHttpError(400, 'PATCH body must be a JSON object', 'invalidSyntax');
  const schemas = body['schemas'];
  if (!Array.isArray(schemas) || !schemas.includes(SCHEMA_PATCH))
    throw new ScimHttpError(400, `schemas must contain ${SCHEMA_PATCH}`, 'invalidSyntax');
  const ops = body['Operations'] ?? body['operations'];
  if (!Array.isArray(ops) || ops.length === 0) throw new ScimHttpError(400, 'Operations must be a non-empty array', 'invalidSyntax');
  return ops.map((raw, i) => {
    if (!isObject(raw) || typeof raw['op'] !== 'string') throw new ScimHttpError(400, `Operations[${i}].op is missing`, 'invalidSyntax');
    const op = raw['op'].toLowerCase();
    if (op !== 'add' && op !== 'replace' && op !== 'remove')
      throw new ScimHttpError(400, `Operations[${i}].op ${raw['op']} is not add, replace or remove`, 'invalidSyntax');
    const path = raw['path'];
    if (path !== undefined && typeof path !== 'string') throw badPath(`Operations[${i}].path must be a string`);
    return { op, path, value: raw['value'] };
  });
}

/** Member values carried by an operation (each counts against maxOperationsPerPatch). */
function weight(o: RawOp): number {
  const touchesMembers = o.path !== undefined ? /^members\b/i.test(o.path.trim()) : isObject(o.value) && Array.isArray(o.value['members']);
  if (!touchesMembers) return 1;
  const v = o.path !== undefined ? o.value : (o.value as Json)['members'];
  return Array.isArray(v) ? Math.max(1, v.length) : 1;
}

export function applyPatch(resource: Json, body: unknown, ctx: PatchContext): Json {
  const ops = readOperations(body);
  if (ctx.maxOperationsPerPatch !== undefined) {
    const total = ops.reduce((n, o) => n + weight(o), 0);
    if (total > ctx.maxOperationsPerPatch) {
      throw new ScimHttpError(
        400,
        `PATCH carries ${total} operations/member values; at most ${ctx.maxOperationsPerPatch} are accepted`,
        'tooMany',
      );
    }
  }
  const target = structuredClone(resource);
  for (const o of ops) {
    if (o.path === undefined || o.path.trim() === '') applyWithoutPath(target, o, ctx);
    else applyAtPath(target, parsePatchPath(o.path), o.op, o.value, o.path, ctx);
  }
  return target;
}

function applyWithoutPath(target: Json, o: RawOp, ctx: PatchContext): void {
  if (o.op === 'remove') throw new ScimHttpError(400, 'remove requires a path', 'noTarget');
  if (!isObject(o.value)) throw badValue(`${o.op} without a path needs an object value`);
  for (const [k, v] of Object.entries(o.value)) {
    // Some IdPs echo schemas, meta or the unchanged id in a no-path value: not a change, so not an error.
    if (k === 'schemas' || k === 'meta' || (k === 'id' && v === target['id'])) continue;
    // An extension object: each of its attributes is an operation on "urn:…:attr".
    if (/^urn:/i.test(k) && isObject(v)) {
      for (const [sub, sv] of Object.entries(v)) applyAtPath(target, parsePatchPath(`${k}:${sub}`), o.op, sv, `${k}:${sub}`, ctx);
    } else {
      applyAtPath(target, parsePatchPath(k), o.op, v, k, ctx);
    }
  }
}

function container(target: Json, p: PatchPath, create: boolean): Json | undefined {
  if (!p.urn) return target;
  const key = keyOf(target, p.urn);
  const ext = target[key];
  if (isObject(ext)) return ext;
  if (!create) return undefined;
  const fresh: Json = {};
  target[key] = fresh;
  return fresh;
}

function applyAtPath(target: Json, p: PatchPath, op: Op, value: unknown, raw: string, ctx: PatchContext): void {
  if (!p.urn && READ_ONLY[ctx.resourceType].includes(p.attr.toLowerCase())) {
    throw new ScimHttpError(400, `${p.attr} is read-only`, 'mutability');
  }
  const isMembers = !p.urn && p.attr.toLowerCase() === 'members';
  if (op === 'remove' && isMembers && !p.sub) {
    if (p.filter && ctx.memberRemoveDialect === 'value-array')
      throw badPath(`filtered member paths are not supported (${raw}); send path "members" with a value array`);
    if (!p.filter && value !== undefined && ctx.memberRemoveDialect === 'filter')
      throw badPath('remove of members with a value array is not supported; use path members[value eq "id"]');
  }
  const c = container(target, p, op !== 'remove');
  if (!c) return;
  const key = keyOf(c, p.attr);
  if (p.filter) return applyFiltered(c, key, p, op, value, raw);
  if (p.sub) return applySub(c, key, p.sub, op, value);
  if (op === 'remove') return removeAttr(c, key, value);
  const current = c[key];
  if (op === 'add' && (Array.isArray(current) || Array.isArray(value))) {
    const list = Array.isArray(current) ? [...current] : current === undefined ? [] : [current];
    for (const v of Array.isArray(value) ? value : [value]) if (!list.some((x) => sameValue(x, v))) list.push(v);
    c[key] = list;
  } else if (isObject(current) && isObject(value)) {
    c[key] = { ...current, ...value }; // complex attribute: unspecified sub-attributes stay
  } else {
    c[key] = value;
  }
}

function applySub(c: Json, key: string, sub: string, op: Op, value: unknown): void {
  const current = c[key];
  if (op === 'remove') {
    if (isObject(current)) delete current[keyOf(current, sub)];
    return;
  }
  const obj = isObject(current) ? current : {};
  obj[keyOf(obj, sub)] = value;
  c[key] = obj;
}

function removeAttr(c: Json, key: string, value: unknown): void {
  const current = c[key];
  // Value-array dialect (e.g. Azure AD): remove just the listed values.
  if (value !== undefined && Array.isArray(current)) {
    const drop = Array.isArray(value) ? value : [value];
    c[key] = current.filter((x) => !drop.some((d) => sameValue(x, d)));
    return;
  }
  delete c[key];
}

function applyFiltered(c: Json, key: string, p: PatchPath, op: Op, value: unknown, raw: string): void {
  const current = c[key];
  const list: unknown[] = Array.isArray(current) ? current : [];
  const match = compileFilter(p.filter!);
  const hits = (x: unknown): boolean => isObject(x) && match(x as Parameters<typeof match>[0]);
  if (op === 'remove') {
    if (p.sub) {
      for (const x of list) if (hits(x)) delete (x as Json)[keyOf(x as Json, p.sub)];
    } else {
      c[key] = list.filter((x) => !hits(x));
    }
    return;
  }
  let matched = 0;
  const next = list.map((x) => {
    if (!hits(x)) return x;
    matched++;
    if (p.sub) return { ...(x as Json), [keyOf(x as Json, p.sub)]: value };
    if (!isObject(value)) throw badValue(`${raw}: value must be an object`);
    return op === 'add' ? { ...(x as Json), ...value } : value;
  });
  if (matched === 0) {
    // `emails[type eq "work"].value` with no work e-mail yet: create it, as IdPs expect.
    const f = p.filter as Compare;
    if (!p.sub || f.op !== 'eq' || typeof f.attrPath !== 'string' || f.attrPath.includes('.')) {
      throw new ScimHttpError(400, `no value matches ${raw}`, 'noTarget');
    }
    next.push({ [f.attrPath]: f.compValue, [p.sub]: value });
  }
  c[key] = next;
}
