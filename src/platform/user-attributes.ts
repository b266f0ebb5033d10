/**
 * The platform's user-attribute API (`/api/v1/user-attributes/`, `/api/v1/user-attribute-values/`).
 * The spec names the endpoints and the attribute types, not the bodies, nor whether the
 * `{userId}` of the values endpoint is the SCIM user id. EVERY assumption about shapes lives in
 * this module (see docs/user-attributes.md, "Payload assumptions"): adapting to the real
 * platform is a change here and in the simulator (src/simulator/user-attributes.ts), nowhere else.
 */
import { ErrorCodes, SyncError, isSyncError } from '../errors.ts';
import { AmbiguousRequestError, type PlatformClient } from './http-client.ts';

import type { UserAttributeType } from './user-attribute-types.ts';

export { USER_ATTRIBUTE_TYPES, type UserAttributeType } from './user-attribute-types.ts';
export type AttributeValue = string | number | boolean | string[] | number[];

export interface AttributeDefinition {
  id: string;
  name: string;
  /** As the platform reports it; may be a type this tool does not know. */
  type: string;
  description?: string;
}

export interface NewAttributeDefinition {
  name: string;
  type: UserAttributeType;
  description?: string;
}

/** One stored value of a user. `null` never comes back from a read: an unset attribute is absent. */
export interface StoredAttributeValue {
  attributeId: string | undefined;
  name: string | undefined;
  value: unknown;
}

/** What the reconcile engine needs; `UserAttributesClient` implements it. */
export interface UserAttributeTarget {
  listDefinitions(signal?: AbortSignal): Promise<AttributeDefinition[]>;
  /** Creates a definition; a 409 or an ambiguous POST is resolved by listing (`adopted`). */
  createDefinition(def: NewAttributeDefinition): Promise<{ definition: AttributeDefinition; adopted: boolean }>;
  updateDefinition(id: string, def: NewAttributeDefinition): Promise<void>;
  getValues(userId: string, signal?: AbortSignal): Promise<StoredAttributeValue[]>;
  /** Sets one value; `null` clears it. */
  upsertValue(userId: string, attributeId: string, value: AttributeValue | null): Promise<void>;
}

// ---- Assumption 1: paths (spec: shown) ----
export const USER_ATTRIBUTE_PATHS = {
  definitions: '/api/v1/user-attributes/',
  definition: (id: string): string => `/api/v1/user-attributes/${encodeURIComponent(id)}`,
  values: (userId: string): string => `/api/v1/user-attribute-values/${encodeURIComponent(userId)}`,
  upsert: '/api/v1/user-attribute-values/',
} as const;

// ---- Assumption 2: the `{userId}` is the SCIM `id` of the user ----
export function platformUserId(scimUser: { id: string }): string {
  return scimUser.id;
}

// ---- Assumption 3: definition bodies `{ name, type, description? }`, responses add `id` ----
export function definitionBody(def: NewAttributeDefinition): Record<string, unknown> {
  return { name: def.name, type: def.type, ...(def.description !== undefined ? { description: def.description } : {}) };
}

export function parseDefinition(raw: unknown, what: string): AttributeDefinition {
  const o = unwrapData(raw);
  if (!isObj(o)) throw bad(what, 'a definition is not an object');
  const id = o['id'];
  const name = o['name'];
  const type = o['type'];
  if ((typeof id !== 'string' && typeof id !== 'number') || String(id) === '') throw bad(what, 'a definition has no id');
  if (typeof name !== 'string' || name === '') throw bad(what, `definition ${String(id)} has no name`);
  if (typeof type !== 'string') throw bad(what, `definition ${name} has no type`);
  return { id: String(id), name, type, ...(typeof o['description'] === 'string' ? { description: o['description'] } : {}) };
}

// ---- Assumption 4: an upsert is `{ userId, attributeId, value }`; `value: null` clears ----
export function valueBody(userId: string, attributeId: string, value: AttributeValue | null): Record<string, unknown> {
  return { userId, attributeId, value };
}

// ---- Assumption 5: a user's values are a list of `{ attributeId, name?, value }` ----
export function parseValue(raw: unknown, what: string): StoredAttributeValue {
  if (!isObj(raw)) throw bad(what, 'a value is not an object');
  const id = raw['attributeId'] ?? raw['attribute_id'];
  const name = raw['name'] ?? raw['attributeName'];
  if (id === undefined && typeof name !== 'string') throw bad(what, 'a value names no attribute');
  return {
    attributeId: id === undefined || id === null ? undefined : String(id),
    name: typeof name === 'string' ? name : undefined,
    value: raw['value'],
  };
}

// ---- Assumption 6: lists are a bare array, or the control-plane envelope ----
/**
 * `[…]`, or `{ data: […] | { <any key>: […] }, pagination: { offset, limit, total } }`.
 * A bare array is taken as the complete list; an envelope is paged with `offset`/`limit`.
 */
export function listItems(body: unknown, what: string): { items: unknown[]; total: number | undefined } {
  if (Array.isArray(body)) return { items: body, total: undefined };
  if (!isObj(body)) throw bad(what, 'the list is neither an array nor a { data, pagination } envelope');
  const data = body['data'];
  let items: unknown[] | undefined;
  if (Array.isArray(data)) items = data;
  else if (isObj(data)) {
    const arrays = Object.values(data).filter(Array.isArray);
    if (arrays.length === 1) items = arrays[0] as unknown[];
  }
  if (items === undefined) throw bad(what, 'the envelope holds no single list in `data`');
  const p = body['pagination'];
  const total = isObj(p) && typeof p['total'] === 'number' && Number.isInteger(p['total']) ? p['total'] : undefined;
  return { items, total };
}

/** Requested page size of envelope lists (the spec's default is 20). */
const PAGE_LIMIT = 100;
/** A list longer than this many pages is a server that ignores `offset`: stop, don't loop. */
const MAX_PAGES = 10_000;

const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json' };

export class UserAttributesClient implements UserAttributeTarget {
  private readonly http: PlatformClient;

  constructor(http: PlatformClient) {
    this.http = http;
  }

  /** This client over a read-only view of its connection (the plan phase): every write fails with E_READ_ONLY before it is sent. */
  readOnly(): UserAttributesClient {
    return new UserAttributesClient(this.http.readOnlyView());
  }

  async listDefinitions(signal?: AbortSignal): Promise<AttributeDefinition[]> {
    const what = 'list user attribute definitions';
    const raw = await this.list(USER_ATTRIBUTE_PATHS.definitions, 'user_attributes', what, signal);
    return raw.map((r) => parseDefinition(r, what));
  }

  async createDefinition(def: NewAttributeDefinition): Promise<{ definition: AttributeDefinition; adopted: boolean }> {
    const what = `create user attribute ${def.name}`;
    try {
      const res = await this.http.requestJson<unknown>('POST', USER_ATTRIBUTE_PATHS.definitions, {
        route: 'user_attributes',
        what,
        body: definitionBody(def),
        headers: JSON_HEADERS,
      });
      return { definition: parseDefinition(res.body, what), adopted: false };
    } catch (e) {
      // 409: it exists (created meanwhile); ambiguous: our POST may have succeeded. Either way: look it up.
      const resolvable = e instanceof AmbiguousRequestError || (isSyncError(e) && e.kind === 'conflict');
      if (!resolvable) throw e;
      const found = (await this.listDefinitions()).find((d) => d.name === def.name);
      if (!found) throw e;
      return { definition: found, adopted: true };
    }
  }

  async updateDefinition(id: string, def: NewAttributeDefinition): Promise<void> {
    await this.http.requestJson<unknown>('PUT', USER_ATTRIBUTE_PATHS.definition(id), {
      route: 'user_attributes',
      what: `update user attribute ${def.name}`,
      body: definitionBody(def),
      headers: JSON_HEADERS,
    });
  }

  async getValues(userId: string, signal?: AbortSignal): Promise<StoredAttributeValue[]> {
    const what = `read user attribute values of user ${userId}`;
    const raw = await this.list(USER_ATTRIBUTE_PATHS.values(userId), 'user_attribute_values', what, signal);
    return raw.map((r) => parseValue(r, what));
  }

  async upsertValue(userId: string, attributeId: string, value: AttributeValue | null): Promise<void> {
    // An upsert of the same value twice has the same effect: safe to retry after a network error.
    await this.http.requestJson<unknown>('POST', USER_ATTRIBUTE_PATHS.upsert, {
      route: 'user_attribute_values',
      what: `${value === null ? 'clear' : 'set'} user attribute ${attributeId} of user ${userId}`,
      body: valueBody(userId, attributeId, value),
      headers: JSON_HEADERS,
      idempotent: true,
    });
  }

  private async list(path: string, route: string, what: string, signal?: AbortSignal): Promise<unknown[]> {
    const out: unknown[] = [];
    for (let page = 0; page < MAX_PAGES; page++) {
      const res = await this.http.requestJson<unknown>('GET', path, {
        route,
        what,
        query: { offset: out.length, limit: PAGE_LIMIT },
        headers: { accept: 'application/json' },
        ...(signal ? { signal } : {}),
      });
      const { items, total } = listItems(res.body, what);
      out.push(...items);
      if (total === undefined || items.length === 0 || out.length >= total) return out;
    }
    throw bad(what, `more than ${MAX_PAGES} pages: the server seems to ignore offset`);
  }
}

function unwrapData(raw: unknown): unknown {
  // A single object may also come wrapped as `{ data: {…} }` (control-plane style).
  return isObj(raw) && isObj(raw['data']) && raw['id'] === undefined ? raw['data'] : raw;
}

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function bad(what: string, why: string): SyncError {
  return new SyncError(ErrorCodes.BAD_RESPONSE, 'transient', `${what}: unexpected response, ${why}`);
}
