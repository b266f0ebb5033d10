/**
 * Compiles the published OCSF schema source (test/audit/ocsf-schema/<version>/, files of the
 * ocsf/ocsf-schema repository at its release commit) into resolved classes and objects, the way
 * the OCSF schema server does: a class or object inherits its parent's attributes (`extends`),
 * pulls in `$include`d includes and profiles, and takes each attribute's caption, type, enum and
 * sibling from the dictionary, its own entries overriding and enum values merging with them.
 * Class uids are `category_uid * 1000 + uid`. Types are resolved to their base type, keeping
 * the derived type's regex, range and length.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

type Json = Record<string, unknown>;

export interface ResolvedAttribute {
  /** The declared type (`email_t`, `timestamp_t`, `object_t` …). */
  type: string;
  /** The scalar type it derives from (`string_t`, `long_t`, `integer_t` …), or `object_t`. */
  baseType: string;
  requirement: 'required' | 'recommended' | 'optional';
  isArray: boolean;
  objectType?: string;
  /** id → caption. */
  enum?: Record<string, string>;
  sibling?: string;
  regex?: RegExp;
  range?: [number, number];
  maxLen?: number;
  /** Part of the class only when the event applies this profile (`metadata.profiles`). */
  profile?: string;
}

export interface ResolvedClass {
  uid: number;
  name: string;
  caption: string;
  categoryUid: number;
  categoryName: string;
  attributes: Record<string, ResolvedAttribute>;
}

export interface ResolvedObject {
  name: string;
  caption: string;
  attributes: Record<string, ResolvedAttribute>;
  /** `at_least_one`: one of these must be present. */
  atLeastOne?: string[];
  justOne?: string[];
}

export interface CompiledSchema {
  version: string;
  classes: Map<number, ResolvedClass>;
  object(name: string): ResolvedObject;
}

export const OCSF_SCHEMA_DIR = new URL('../ocsf-schema/', import.meta.url).pathname;

export function compileOcsfSchema(version: string, classFiles: readonly string[]): CompiledSchema {
  const root = join(OCSF_SCHEMA_DIR, version);
  const read = (rel: string): Json => JSON.parse(readFileSync(join(root, rel), 'utf8')) as Json;
  const published = (read('version.json') as { version: string }).version;
  if (published !== version) throw new Error(`${root}: version.json says ${published}, not ${version}`);
  const dictionary = read('dictionary.json') as { attributes: Record<string, Json>; types: { attributes: Record<string, Json> } };
  const categories = (read('categories.json') as { attributes: Record<string, { uid: number; caption: string }> }).attributes;
  const types = dictionary.types.attributes;

  const eventsByName = new Map<string, { file: string; json: Json }>();
  const loadEvent = (file: string): void => {
    const json = read(file);
    eventsByName.set(json['name'] as string, { file, json });
  };
  loadEvent('events/base_event.json');
  for (const f of classFiles) loadEvent(f);

  /** Attribute entries of a source file, its `$include`s merged in (the file's own entries win). */
  const ownAttributes = (json: Json): Record<string, Json> => {
    const attrs = { ...((json['attributes'] as Record<string, Json> | undefined) ?? {}) };
    const includes = (attrs['$include'] as unknown as string[] | undefined) ?? [];
    delete attrs['$include'];
    let merged: Record<string, Json> = {};
    for (const inc of includes) {
      const included = read(inc);
      let incAttrs = ownAttributes(included);
      if (included['meta'] === 'profile') {
        const profile = included['name'] as string;
        incAttrs = Object.fromEntries(Object.entries(incAttrs).map(([n, a]) => [n, { profile, ...a }]));
      }
      merged = mergeAttributes(merged, incAttrs);
    }
    return mergeAttributes(merged, attrs);
  };

  const resolveAttribute = (name: string, local: Json, where: string): ResolvedAttribute => {
    const dict = dictionary.attributes[name];
    if (!dict) throw new Error(`${where}: attribute ${name} is not in the dictionary`);
    const spec = mergeEntry(dict, local);
    const declared = spec['type'] as string;
    const out: ResolvedAttribute = {
      type: declared,
      baseType: declared,
      requirement: (spec['requirement'] as ResolvedAttribute['requirement'] | undefined) ?? 'optional',
      isArray: spec['is_array'] === true,
    };
    if (!declared.endsWith('_t')) {
      out.type = 'object_t';
      out.baseType = 'object_t';
      out.objectType = declared;
    } else {
      let t = declared;
      for (let guard = 0; guard < 8; guard++) {
        const def = types[t];
        if (!def) throw new Error(`${where}.${name}: unknown type ${t}`);
        if (def['regex'] !== undefined && out.regex === undefined) out.regex = new RegExp(def['regex'] as string);
        if (def['range'] !== undefined && out.range === undefined) out.range = def['range'] as [number, number];
        if (def['max_len'] !== undefined && out.maxLen === undefined) out.maxLen = def['max_len'] as number;
        if (typeof def['type'] !== 'string') break;
        t = def['type'];
      }
      out.baseType = t;
    }
    const e = spec['enum'] as Record<string, { caption: string }> | undefined;
    if (e) out.enum = Object.fromEntries(Object.entries(e).map(([id, v]) => [id, v.caption]));
    if (typeof spec['sibling'] === 'string') out.sibling = spec['sibling'];
    // `profile: null` in a class makes a profile's attribute the class's own.
    if (typeof local['profile'] === 'string') out.profile = local['profile'];
    return out;
  };

  const resolveAttributes = (attrs: Record<string, Json>, where: string): Record<string, ResolvedAttribute> =>
    Object.fromEntries(Object.entries(attrs).map(([n, a]) => [n, resolveAttribute(n, a, where)]));

  const classAttributes = (name: string): { attrs: Record<string, Json>; category: string | undefined } => {
    const ev = eventsByName.get(name);
    if (!ev) throw new Error(`event class ${name} is not vendored`);
    const parent = ev.json['extends'] as string | undefined;
    const base = parent ? classAttributes(parent) : { attrs: {}, category: undefined };
    return {
      attrs: mergeAttributes(base.attrs, ownAttributes(ev.json)),
      category: (ev.json['category'] as string | undefined) ?? base.category,
    };
  };

  const classes = new Map<number, ResolvedClass>();
  for (const f of classFiles) {
    const json = read(f);
    if (typeof json['uid'] !== 'number') continue; // a category's base class (iam, application)
    const name = json['name'] as string;
    const { attrs, category } = classAttributes(name);
    const cat = category ? categories[category] : undefined;
    if (!cat) throw new Error(`${f}: no category`);
    const uid = cat.uid * 1000 + json['uid'];
    const caption = json['caption'] as string;
    const attributes = resolveAttributes(attrs, name);
    // The uids the server derives for a class: its category, itself, and one type per activity.
    const fix = (n: string, e: Record<string, string>): void => {
      const a = attributes[n];
      if (!a) throw new Error(`${name}: no ${n}`);
      a.enum = e;
    };
    fix('category_uid', { [cat.uid]: cat.caption });
    fix('class_uid', { [uid]: caption });
    const activities = attributes['activity_id']?.enum ?? {};
    fix('type_uid', Object.fromEntries(Object.entries(activities).map(([id, c]) => [uid * 100 + Number(id), `${caption}: ${c}`])));
    classes.set(uid, { uid, name, caption, categoryUid: cat.uid, categoryName: cat.caption, attributes });
  }

  const objects = new Map<string, ResolvedObject>();
  const objectSource = (name: string): Json => read(`objects/${name}.json`);
  const objectAttributes = (name: string): { attrs: Record<string, Json>; constraints: Json | undefined } => {
    const json = objectSource(name);
    const parent = json['extends'] as string | undefined;
    const base = parent && parent !== 'object' ? objectAttributes(parent) : { attrs: {}, constraints: undefined };
    return {
      attrs: mergeAttributes(base.attrs, ownAttributes(json)),
      constraints: (json['constraints'] as Json | undefined) ?? base.constraints,
    };
  };
  const object = (name: string): ResolvedObject => {
    const known = objects.get(name);
    if (known) return known;
    const { attrs, constraints } = objectAttributes(name);
    const resolved: ResolvedObject = {
      name,
      caption: objectSource(name)['caption'] as string,
      attributes: resolveAttributes(attrs, name),
      ...(Array.isArray(constraints?.['at_least_one']) ? { atLeastOne: constraints['at_least_one'] as string[] } : {}),
      ...(Array.isArray(constraints?.['just_one']) ? { justOne: constraints['just_one'] as string[] } : {}),
    };
    objects.set(name, resolved);
    return resolved;
  };

  return { version, classes, object };
}

/** A child's attribute entries over its parent's: each entry merged field by field. */
function mergeAttributes(parent: Record<string, Json>, child: Record<string, Json>): Record<string, Json> {
  const out = { ...parent };
  for (const [n, a] of Object.entries(child)) out[n] = out[n] ? mergeEntry(out[n], a) : a;
  return out;
}

/** One attribute entry over another; enum values are merged (a class adds its activities to 0 and 99). */
function mergeEntry(base: Json, over: Json): Json {
  const out: Json = { ...base, ...over };
  const be = base['enum'] as Json | undefined;
  const oe = over['enum'] as Json | undefined;
  if (be && oe) out['enum'] = { ...be, ...oe };
  return out;
}
