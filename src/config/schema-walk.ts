/**
 * Walks a zod schema in step with a value, so the loader can find marked keys (secret
 * files) and the issue formatter can list the keys an object accepts. Only the schema
 * shapes the config uses are understood: objects, records, arrays, unions and the
 * wrappers (optional, default, prefault, pipe…). zod's `_zod.def` is its documented
 * introspection surface in v4.
 */
import type { z } from 'zod';

export type AnySchema = z.core.$ZodType;
export type PathSegment = string | number;

interface Def {
  type: string;
  innerType?: AnySchema;
  in?: AnySchema;
  shape?: Record<string, AnySchema>;
  options?: AnySchema[];
  discriminator?: string;
  valueType?: AnySchema;
  element?: AnySchema;
  getter?: () => AnySchema;
  values?: unknown[];
}

const WRAPPERS = new Set(['optional', 'nullable', 'default', 'prefault', 'nonoptional', 'readonly', 'catch']);

function defOf(schema: AnySchema): Def {
  return (schema as unknown as { _zod: { def: Def } })._zod.def;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The union member that applies to `value`: by discriminator, else the first that accepts it, else the first of the same JS shape. */
function pickOption(def: Def, value: unknown): AnySchema | undefined {
  const options = def.options ?? [];
  if (def.discriminator !== undefined && isPlainObject(value)) {
    const wanted = value[def.discriminator];
    for (const option of options) {
      const tag = objectShape(option)?.[def.discriminator];
      if (tag && (defOf(unwrapChain(tag).at(-1) as AnySchema).values ?? []).includes(wanted)) return option;
    }
    return undefined;
  }
  for (const option of options) {
    if ((option as z.ZodType).safeParse(value).success) return option;
  }
  const wantObject = isPlainObject(value);
  return options.find((o) => (objectShape(o) !== undefined) === wantObject);
}

/** The layers from `schema` down to the concrete type, choosing union members by `value`. */
export function unwrapChain(schema: AnySchema, value?: unknown): AnySchema[] {
  const chain: AnySchema[] = [schema];
  let current = schema;
  for (let depth = 0; depth < 32; depth++) {
    const def = defOf(current);
    let next: AnySchema | undefined;
    if (WRAPPERS.has(def.type)) next = def.innerType;
    else if (def.type === 'pipe') next = def.in;
    else if (def.type === 'lazy') next = def.getter?.();
    else if (def.type === 'union') next = pickOption(def, value);
    if (next === undefined) break;
    chain.push(next);
    current = next;
  }
  return chain;
}

/** The keys an object schema accepts, or undefined when it is not an object. */
export function objectShape(schema: AnySchema, value?: unknown): Record<string, AnySchema> | undefined {
  const inner = unwrapChain(schema, value).at(-1) as AnySchema;
  const def = defOf(inner);
  return def.type === 'object' ? def.shape : undefined;
}

export interface SchemaNode {
  /** Every layer of the schema at this key, outermost first. */
  chain: AnySchema[];
  value: unknown;
  path: PathSegment[];
}

/** Visits every key present in both `value` and `schema`, depth first. */
export function walkSchema(schema: AnySchema, value: unknown, visit: (node: SchemaNode) => void, path: PathSegment[] = []): void {
  const chain = unwrapChain(schema, value);
  visit({ chain, value, path });
  const def = defOf(chain.at(-1) as AnySchema);
  if (def.type === 'object' && isPlainObject(value)) {
    for (const [key, child] of Object.entries(def.shape ?? {})) {
      if (key in value) walkSchema(child, value[key], visit, [...path, key]);
    }
  } else if (def.type === 'record' && def.valueType && isPlainObject(value)) {
    for (const [key, child] of Object.entries(value)) walkSchema(def.valueType, child, visit, [...path, key]);
  } else if (def.type === 'array' && def.element && Array.isArray(value)) {
    value.forEach((child, i) => walkSchema(def.element as AnySchema, child, visit, [...path, i]));
  }
}

/** The schema that applies at `path` in a raw (not yet valid) input, if it can be told. */
export function schemaAt(schema: AnySchema, input: unknown, path: readonly PathSegment[]): AnySchema | undefined {
  let current: AnySchema | undefined = schema;
  let value = input;
  for (const segment of path) {
    if (current === undefined) return undefined;
    const def = defOf(unwrapChain(current, value).at(-1) as AnySchema);
    const next: unknown = isPlainObject(value) || Array.isArray(value) ? (value as Record<PathSegment, unknown>)[segment] : undefined;
    if (def.type === 'object') current = def.shape?.[String(segment)];
    else if (def.type === 'record') current = def.valueType;
    else if (def.type === 'array') current = def.element;
    else return undefined;
    value = next;
  }
  return current;
}

/** Reads the value at `path` in a raw input (for messages). */
export function valueAt(input: unknown, path: readonly PathSegment[]): unknown {
  let value = input;
  for (const segment of path) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<PathSegment, unknown>)[segment];
  }
  return value;
}
