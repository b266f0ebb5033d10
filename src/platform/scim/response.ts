/**
 * Validation of SCIM response bodies. Attribute names are case-insensitive in SCIM
 * (RFC 7643 §2.1), so `Resources`/`resources` and `totalResults`/`totalresults` both work.
 * A body we cannot trust fails with E_BAD_RESPONSE instead of being half-used.
 */
import { ErrorCodes, SyncError } from '../../errors.ts';
import type { Page } from './paging.ts';
import type { ScimResource, ServiceProviderConfig } from './types.ts';

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function pick(obj: Obj, name: string): unknown {
  if (name in obj) return obj[name];
  const lower = name.toLowerCase();
  const key = Object.keys(obj).find((k) => k.toLowerCase() === lower);
  return key === undefined ? undefined : obj[key];
}

function bad(what: string, why: string): SyncError {
  return new SyncError(ErrorCodes.BAD_RESPONSE, 'transient', `${what}: unexpected response, ${why}`);
}

export function asResource<T extends ScimResource>(body: unknown, what: string): T {
  if (!isObj(body)) throw bad(what, 'the body is not a SCIM resource object');
  const id = pick(body, 'id');
  if (typeof id !== 'string' || id === '') throw bad(what, 'the resource has no id');
  if (!Array.isArray(body['schemas'])) body['schemas'] = [];
  return body as T;
}

/** The resource of a create's answer, or undefined when it has no body or no id (some servers answer 201 so). */
export function createdResource<T extends ScimResource>(body: unknown): T | undefined {
  if (!isObj(body)) return undefined;
  const id = pick(body, 'id');
  if (typeof id !== 'string' || id === '') return undefined;
  if (!('id' in body)) body['id'] = id;
  if (!Array.isArray(body['schemas'])) body['schemas'] = [];
  return body as T;
}

export function asListPage<T extends ScimResource>(body: unknown, what: string, startIndex: number): Page<T> {
  if (!isObj(body)) throw bad(what, `the list page at startIndex ${startIndex} is not a ListResponse object`);
  const rawTotal = pick(body, 'totalResults');
  const total = typeof rawTotal === 'string' && rawTotal.trim() !== '' ? Number(rawTotal) : rawTotal;
  if (typeof total !== 'number' || !Number.isInteger(total) || total < 0) {
    throw bad(what, `the list page at startIndex ${startIndex} has no valid totalResults`);
  }
  const raw = pick(body, 'Resources') ?? [];
  if (!Array.isArray(raw)) throw bad(what, `Resources at startIndex ${startIndex} is not an array`);
  const resources = raw.map((r, i) => {
    // A resource without an id cannot be matched, updated or deleted: refuse the page
    // rather than drop it silently.
    if (!isObj(r) || typeof pick(r, 'id') !== 'string' || pick(r, 'id') === '') {
      throw bad(what, `resource #${startIndex + i} in the listing has no id`);
    }
    if (!('id' in r)) r['id'] = pick(r, 'id');
    return r as T;
  });
  return { resources, totalResults: total };
}

/** Only the fields we rely on, each checked; anything malformed is treated as absent. */
export function asServiceProviderConfig(body: unknown): ServiceProviderConfig | undefined {
  if (!isObj(body)) return undefined;
  const out: ServiceProviderConfig = {};
  const patch = pick(body, 'patch');
  if (isObj(patch) && typeof pick(patch, 'supported') === 'boolean') out.patch = { supported: pick(patch, 'supported') as boolean };
  const filter = pick(body, 'filter');
  if (isObj(filter)) {
    const supported = pick(filter, 'supported');
    const maxResults = pick(filter, 'maxResults');
    out.filter = {
      ...(typeof supported === 'boolean' ? { supported } : {}),
      ...(typeof maxResults === 'number' && Number.isInteger(maxResults) && maxResults > 0 ? { maxResults } : {}),
    };
  }
  const bulk = pick(body, 'bulk');
  if (isObj(bulk) && typeof pick(bulk, 'supported') === 'boolean') out.bulk = { supported: pick(bulk, 'supported') as boolean };
  const etag = pick(body, 'etag');
  if (isObj(etag) && typeof pick(etag, 'supported') === 'boolean') out.etag = { supported: pick(etag, 'supported') as boolean };
  return out;
}
