/**
 * SCIM attribute paths as PATCH uses them (RFC 7644 §3.5.2):
 * `active`, `name.givenName`, `emails[type eq "work"].value`, `members[value eq "id"]`,
 * `urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department`.
 * Attribute names are case-insensitive, so lookups go through `findKey`.
 */
import { ErrorCodes, SyncError } from '../../errors.ts';
import { parseFilter, type Filter } from './filter.ts';

export interface AttrPath {
  /** Schema URN prefix, when the path was fully qualified. */
  urn?: string;
  attr: string;
  /** Value filter of a multi-valued attribute (`emails[type eq "work"]`). */
  filter?: Filter;
  /** Sub-attribute after a dot or after the value filter. */
  sub?: string;
}

export function parseAttrPath(path: string): AttrPath {
  let rest = path.trim();
  let urn: string | undefined;
  if (/^urn:/i.test(rest)) {
    const bracket = rest.indexOf('[');
    const head = bracket < 0 ? rest : rest.slice(0, bracket);
    const colon = head.lastIndexOf(':');
    urn = rest.slice(0, colon);
    rest = rest.slice(colon + 1);
  }
  const bracket = rest.indexOf('[');
  if (bracket >= 0) {
    const close = rest.lastIndexOf(']');
    if (close < bracket) throw invalidPath(path);
    const after = rest.slice(close + 1);
    if (after !== '' && !after.startsWith('.')) throw invalidPath(path);
    return {
      ...(urn !== undefined ? { urn } : {}),
      attr: rest.slice(0, bracket),
      filter: parseFilter(rest.slice(bracket + 1, close)),
      ...(after ? { sub: after.slice(1) } : {}),
    };
  }
  const dot = rest.indexOf('.');
  if (rest === '' || dot === 0) throw invalidPath(path);
  return {
    ...(urn !== undefined ? { urn } : {}),
    attr: dot < 0 ? rest : rest.slice(0, dot),
    ...(dot >= 0 ? { sub: rest.slice(dot + 1) } : {}),
  };
}

/** The existing key of `obj` matching `name` case-insensitively, else `name` itself. */
export function findKey(obj: Record<string, unknown>, name: string): string {
  if (Object.hasOwn(obj, name)) return name;
  const lower = name.toLowerCase();
  return Object.keys(obj).find((k) => k.toLowerCase() === lower) ?? name;
}

export function invalidPath(path: string, why = 'unsupported or malformed path'): SyncError {
  return new SyncError(ErrorCodes.REJECTED, 'rejected', `PATCH path ${JSON.stringify(path)}: ${why}`);
}
