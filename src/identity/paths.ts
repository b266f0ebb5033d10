/**
 * SCIM attribute paths as used in mapping and PATCH: `title`, `name.givenName`, or an
 * extension path `urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department`
 * (the schema URN up to the last colon, then a dotted sub-path).
 */

export interface ParsedPath {
  /** Extension schema URN, or undefined for the core schema. */
  urn: string | undefined;
  /** Attribute names below the schema, e.g. ['manager', 'value']. */
  segments: string[];
}

export function parsePath(path: string): ParsedPath {
  if (path.toLowerCase().startsWith('urn:')) {
    const i = path.lastIndexOf(':');
    return { urn: path.slice(0, i), segments: path.slice(i + 1).split('.') };
  }
  return { urn: undefined, segments: path.split('.') };
}

/** Read a path from a SCIM resource (or any object); undefined when absent. */
export function getPath(obj: Record<string, unknown>, path: string): unknown {
  const { urn, segments } = parsePath(path);
  let cur: unknown = urn === undefined ? obj : findKeyCaseInsensitive(obj, urn);
  for (const seg of segments) {
    if (cur === null || typeof cur !== 'object' || Array.isArray(cur)) return undefined;
    cur = findKeyCaseInsensitive(cur as Record<string, unknown>, seg);
  }
  return cur;
}

/** Write a path into a resource, creating intermediate objects (and registering the URN in `schemas`). */
export function setPath(obj: Record<string, unknown>, path: string, value: unknown): void {
  const { urn, segments } = parsePath(path);
  let cur: Record<string, unknown> = obj;
  if (urn !== undefined) {
    const schemas = Array.isArray(obj['schemas']) ? (obj['schemas'] as string[]) : [];
    if (!schemas.includes(urn)) obj['schemas'] = [...schemas, urn];
    cur = child(cur, urn);
  }
  segments.slice(0, -1).forEach((seg) => {
    cur = child(cur, seg);
  });
  cur[segments[segments.length - 1] as string] = value;
}

/** Dotted path into a plain object (normalized users: `attributes.department`). */
export function getField(obj: unknown, dotted: string): unknown {
  let cur: unknown = obj;
  for (const seg of dotted.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[seg];
  }
  return cur;
}

function child(obj: Record<string, unknown>, key: string): Record<string, unknown> {
  const existing = obj[key];
  if (existing !== null && typeof existing === 'object' && !Array.isArray(existing)) return existing as Record<string, unknown>;
  const fresh: Record<string, unknown> = {};
  obj[key] = fresh;
  return fresh;
}

/** SCIM attribute names are case-insensitive (RFC 7643 §2.1). */
function findKeyCaseInsensitive(obj: Record<string, unknown>, key: string): unknown {
  if (key in obj) return obj[key];
  const lower = key.toLowerCase();
  for (const k of Object.keys(obj)) if (k.toLowerCase() === lower) return obj[k];
  return undefined;
}
