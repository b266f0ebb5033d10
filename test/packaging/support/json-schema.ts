/**
 * A validator for the JSON-Schema (draft-07) subset the chart's values.schema.json uses, so
 * the tests can check values files the way `helm lint` would without helm. A keyword outside
 * the subset throws: a schema must never rely on something this validator silently skips.
 */

export type JsonSchema = { [keyword: string]: unknown };

export interface SchemaIssue {
  /** Dotted path of the offending value, e.g. `networkPolicy.platform.ports[0].port`; `(root)` for the document. */
  path: string;
  message: string;
}

/** Keywords that constrain nothing (documentation, draft markers). */
const ANNOTATIONS = new Set(['$schema', '$id', '$comment', 'title', 'description', 'default', 'examples', 'definitions']);

const ASSERTIONS = new Set([
  'type',
  'properties',
  'additionalProperties',
  'required',
  'propertyNames',
  'enum',
  'const',
  'items',
  'minItems',
  'maxItems',
  'uniqueItems',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'minLength',
  'maxLength',
  'pattern',
  'anyOf',
  'oneOf',
  'allOf',
  '$ref',
]);

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function typeOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

function matchesType(v: unknown, type: string): boolean {
  const actual = typeOf(v);
  return actual === type || (type === 'number' && actual === 'integer');
}

const join = (path: string, key: string | number): string =>
  typeof key === 'number' ? `${path}[${key}]` : path === '' ? key : `${path}.${key}`;
const shown = (path: string): string => path || '(root)';

function deepEqual(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function resolveRef(root: JsonSchema, ref: string): JsonSchema {
  if (!ref.startsWith('#/')) throw new Error(`unsupported $ref ${ref}: only local #/… references`);
  let node: unknown = root;
  for (const raw of ref.slice(2).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    node = isObject(node) ? node[key] : undefined;
  }
  if (!isObject(node)) throw new Error(`$ref ${ref} does not resolve`);
  return node;
}

/** Throws when `schema` (recursively) uses a keyword outside the supported subset. */
export function assertSupportedKeywords(schema: unknown, where = '#'): void {
  if (!isObject(schema)) return;
  for (const [k, v] of Object.entries(schema)) {
    if (!ASSERTIONS.has(k) && !ANNOTATIONS.has(k)) throw new Error(`${where}: unsupported keyword "${k}"`);
    if (k === 'properties' || k === 'definitions') {
      for (const [name, sub] of Object.entries(v as Record<string, unknown>)) assertSupportedKeywords(sub, `${where}/${k}/${name}`);
    } else if (k === 'anyOf' || k === 'oneOf' || k === 'allOf') {
      (v as unknown[]).forEach((sub, i) => assertSupportedKeywords(sub, `${where}/${k}/${i}`));
    } else if (k === 'items' || k === 'additionalProperties' || k === 'propertyNames') {
      assertSupportedKeywords(v, `${where}/${k}`);
    }
  }
}

const depth = (issues: SchemaIssue[]): number => Math.max(...issues.map((i) => i.path.split(/[.[]/).length));

/** The failing branch that got furthest into the value (deepest issue, then fewest issues): the shape the author most likely meant. */
function closest(results: SchemaIssue[][]): SchemaIssue[] {
  return results.reduce((a, b) => (depth(b) > depth(a) || (depth(b) === depth(a) && b.length < a.length) ? b : a));
}

function check(schema: JsonSchema, value: unknown, path: string, root: JsonSchema, out: SchemaIssue[]): void {
  const issue = (message: string, at = path): void => void out.push({ path: shown(at), message });

  if (typeof schema['$ref'] === 'string') check(resolveRef(root, schema['$ref']), value, path, root, out);

  const type = schema['type'];
  if (type !== undefined) {
    const types = Array.isArray(type) ? (type as string[]) : [type as string];
    if (!types.some((t) => matchesType(value, t))) return issue(`must be ${types.join(' or ')}, got ${typeOf(value)}`);
  }
  if (schema['enum'] !== undefined && !(schema['enum'] as unknown[]).some((e) => deepEqual(e, value))) {
    issue(`must be one of ${(schema['enum'] as unknown[]).map((e) => JSON.stringify(e)).join(', ')}`);
  }
  if ('const' in schema && !deepEqual(schema['const'], value)) issue(`must be ${JSON.stringify(schema['const'])}`);

  if (typeof value === 'string') {
    const length = [...value].length;
    if (typeof schema['minLength'] === 'number' && length < schema['minLength'])
      issue(`must have at least ${schema['minLength']} characters`);
    if (typeof schema['maxLength'] === 'number' && length > schema['maxLength'])
      issue(`must have at most ${schema['maxLength']} characters`);
    if (typeof schema['pattern'] === 'string' && !new RegExp(schema['pattern'], 'u').test(value)) issue(`must match ${schema['pattern']}`);
  }
  if (typeof value === 'number') {
    if (typeof schema['minimum'] === 'number' && value < schema['minimum']) issue(`must be >= ${schema['minimum']}`);
    if (typeof schema['maximum'] === 'number' && value > schema['maximum']) issue(`must be <= ${schema['maximum']}`);
    if (typeof schema['exclusiveMinimum'] === 'number' && value <= schema['exclusiveMinimum'])
      issue(`must be > ${schema['exclusiveMinimum']}`);
    if (typeof schema['exclusiveMaximum'] === 'number' && value >= schema['exclusiveMaximum'])
      issue(`must be < ${schema['exclusiveMaximum']}`);
  }
  if (Array.isArray(value)) {
    if (typeof schema['minItems'] === 'number' && value.length < schema['minItems'])
      issue(`must have at least ${schema['minItems']} items`);
    if (typeof schema['maxItems'] === 'number' && value.length > schema['maxItems']) issue(`must have at most ${schema['maxItems']} items`);
    if (schema['uniqueItems'] === true && new Set(value.map((v) => JSON.stringify(v))).size !== value.length)
      issue('must not repeat items');
    if (isObject(schema['items'])) value.forEach((item, i) => check(schema['items'] as JsonSchema, item, join(path, i), root, out));
  }
  if (isObject(value)) {
    const props = isObject(schema['properties']) ? schema['properties'] : {};
    for (const key of (schema['required'] as string[] | undefined) ?? []) {
      if (!(key in value)) issue(`is required`, join(path, key));
    }
    for (const [key, v] of Object.entries(value)) {
      if (isObject(schema['propertyNames'])) {
        const names: SchemaIssue[] = [];
        check(schema['propertyNames'] as JsonSchema, key, join(path, key), root, names);
        for (const n of names) issue(`key name ${n.message}`, join(path, key));
      }
      const sub = props[key];
      if (isObject(sub)) check(sub, v, join(path, key), root, out);
      else if (schema['additionalProperties'] === false) issue('is not allowed (unknown key)', join(path, key));
      else if (isObject(schema['additionalProperties'])) check(schema['additionalProperties'] as JsonSchema, v, join(path, key), root, out);
    }
  }

  const branches = (k: string): SchemaIssue[][] =>
    ((schema[k] as JsonSchema[] | undefined) ?? []).map((b) => {
      const o: SchemaIssue[] = [];
      check(b, value, path, root, o);
      return o;
    });
  if (schema['allOf'] !== undefined) for (const b of branches('allOf')) out.push(...b);
  if (schema['anyOf'] !== undefined) {
    const results = branches('anyOf');
    if (!results.some((r) => r.length === 0)) {
      issue(`matches none of the ${results.length} allowed shapes`);
      out.push(...closest(results));
    }
  }
  if (schema['oneOf'] !== undefined) {
    const results = branches('oneOf');
    const passing = results.filter((r) => r.length === 0).length;
    if (passing !== 1) {
      issue(passing === 0 ? `matches none of the ${results.length} allowed shapes` : `matches ${passing} shapes, exactly one allowed`);
      if (passing === 0) out.push(...closest(results));
    }
  }
}

/** Every problem of `value` against `schema` (empty: valid). */
export function validate(schema: JsonSchema, value: unknown): SchemaIssue[] {
  assertSupportedKeywords(schema);
  const out: SchemaIssue[] = [];
  check(schema, value, '', schema, out);
  return out;
}
