/**
 * Turning stored resources into response JSON: the read-only `groups` of a user and the
 * `attributes` / `excludedAttributes` projection (RFC 7644 §3.9). id and schemas always stay.
 */
import { SCHEMA_GROUP, SCHEMA_USER, type ScimResource } from '../platform/scim/types.ts';
import { keyOf } from './patch-path.ts';
import type { SimStore } from './store.ts';

type Json = Record<string, unknown>;

export interface Projection {
  attributes?: string[];
  excluded?: string[];
}

export function projectionFrom(query: URLSearchParams): Projection {
  const list = (raw: string | null): string[] | undefined =>
    raw === null || raw.trim() === ''
      ? undefined
      : raw
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean);
  const attributes = list(query.get('attributes'));
  const excluded = list(query.get('excludedAttributes'));
  return { ...(attributes ? { attributes } : {}), ...(excluded ? { excluded } : {}) };
}

/** [urn, attribute, sub] of an attribute reference, the core schema URN dropped. */
function splitRef(ref: string): [string | undefined, string, string | undefined] {
  let urn: string | undefined;
  let rest = ref;
  if (/^urn:/i.test(ref)) {
    const i = ref.lastIndexOf(':');
    urn = ref.slice(0, i);
    rest = ref.slice(i + 1);
    if ([SCHEMA_USER, SCHEMA_GROUP].some((s) => s.toLowerCase() === urn?.toLowerCase())) urn = undefined;
    // A bare extension URN ("urn:…:enterprise:2.0:User") names the whole extension object.
    else if (!/^[a-z$]/i.test(rest) || rest === 'User' || rest === 'Group') return [undefined, ref, undefined];
  }
  const dot = rest.indexOf('.');
  return dot === -1 ? [urn, rest, undefined] : [urn, rest.slice(0, dot), rest.slice(dot + 1)];
}

function include(out: Json, src: Json, ref: string): void {
  const [urn, attr, sub] = splitRef(ref);
  const from = urn ? src[keyOf(src, urn)] : src;
  if (typeof from !== 'object' || from === null) return;
  const f = from as Json;
  const key = keyOf(f, attr);
  if (!(key in f)) return;
  let to = out;
  if (urn) to = (out[keyOf(src, urn)] ??= {}) as Json;
  const value = f[key];
  if (sub === undefined || typeof value !== 'object' || value === null) {
    to[key] = value;
    return;
  }
  if (Array.isArray(value)) {
    to[key] = value.map((v) =>
      typeof v === 'object' && v !== null && keyOf(v as Json, sub) in v
        ? { [keyOf(v as Json, sub)]: (v as Json)[keyOf(v as Json, sub)] }
        : {},
    );
  } else {
    const prev = (to[key] ?? {}) as Json;
    to[key] = { ...prev, [keyOf(value as Json, sub)]: (value as Json)[keyOf(value as Json, sub)] };
  }
}

function exclude(out: Json, ref: string): void {
  const [urn, attr, sub] = splitRef(ref);
  let h = out;
  if (urn) {
    // Copy the extension object before changing it: `out` is only a shallow copy of the stored resource.
    const ext = out[keyOf(out, urn)];
    if (typeof ext !== 'object' || ext === null) return;
    h = { ...(ext as Json) };
    out[keyOf(out, urn)] = h;
  }
  const key = keyOf(h, attr);
  if (key === 'id' || key === 'schemas') return;
  if (sub === undefined) {
    delete h[key];
    return;
  }
  const value = h[key];
  if (Array.isArray(value))
    h[key] = value.map((v: Json) => Object.fromEntries(Object.entries(v).filter(([k]) => k.toLowerCase() !== sub.toLowerCase())));
  else if (typeof value === 'object' && value !== null)
    h[key] = Object.fromEntries(Object.entries(value).filter(([k]) => k.toLowerCase() !== sub.toLowerCase()));
}

/** The response form of a stored resource (a new object; the stored one is never exposed to mutation). */
export function render(store: SimStore, r: ScimResource, p: Projection = {}): Json {
  let full: Json = r;
  if (r.meta?.resourceType === 'User') {
    const groupIds = store.groupIdsOf(r.id);
    if (groupIds.length > 0) {
      full = {
        ...r,
        groups: groupIds.map((id) => ({
          value: id,
          display: store.getGroup(id)?.displayName,
          $ref: store.location('Groups', id),
          type: 'direct',
        })),
      };
    }
  }
  if (p.attributes) {
    const out: Json = { schemas: full['schemas'], id: full['id'] };
    for (const ref of p.attributes) include(out, full, ref);
    return out;
  }
  if (p.excluded) {
    const out: Json = { ...full };
    for (const ref of p.excluded) exclude(out, ref);
    return out;
  }
  return full;
}
