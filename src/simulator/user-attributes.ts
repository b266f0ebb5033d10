/**
 * The platform's user-attribute endpoints, implementing exactly the shapes assumed in
 * src/platform/user-attributes.ts (documented in docs/user-attributes.md): definitions
 * `{ id, name, type, description? }`, values `{ attributeId, name, value }`, upsert
 * `{ userId, attributeId, value }` with `null` clearing. Lists answer as a bare array or the
 * control-plane `{ data, pagination }` envelope (paged by offset/limit). Types are validated;
 * errors are `{ "error": "…" }` with 400/401/403/404/409.
 */
import { randomUUID } from 'node:crypto';
import { platformError } from './audit-routes.ts';
import { authenticatePlatform } from './auth.ts';
import type { JsonResponse, SimRequest } from './http-io.ts';
import type { SimStore } from './store.ts';
import type { SimulatorToken } from './types.ts';

export const USER_ATTRIBUTES_PATH = '/api/v1/user-attributes';
export const USER_ATTRIBUTE_VALUES_PATH = '/api/v1/user-attribute-values';
/** The permission a restricted simulator token needs for these endpoints (a simulator convention). */
export const USER_ATTRIBUTES_PERMISSION = 'UserAttributesManage';

const TYPES = new Set(['string', 'number', 'boolean', 'string_array', 'number_array']);

export interface SimAttributeDefinition {
  id: string;
  name: string;
  type: string;
  description?: string;
}

export type SimAttributeValue = string | number | boolean | string[] | number[];

export interface UserAttributesSimOptions {
  /** `array` (default): lists are bare arrays; `envelope`: `{ data: { <key>: […] }, pagination }`. */
  listShape?: 'array' | 'envelope';
  /** Envelope lists: server cap on `limit` (default 100); the default limit is 20 as in the spec. */
  maxPageSize?: number;
}

class HttpError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

/** Definitions and values; tests seed and inspect through the same methods the routes use. */
export class SimUserAttributes {
  private readonly defs = new Map<string, SimAttributeDefinition>();
  /** userId → attributeId → value. */
  private readonly vals = new Map<string, Map<string, SimAttributeValue>>();
  private readonly store: SimStore;
  readonly options: Required<UserAttributesSimOptions>;

  constructor(store: SimStore, opts: UserAttributesSimOptions = {}) {
    this.store = store;
    this.options = { listShape: opts.listShape ?? 'array', maxPageSize: opts.maxPageSize ?? 100 };
  }

  definitions(): SimAttributeDefinition[] {
    return [...this.defs.values()];
  }

  definitionByName(name: string): SimAttributeDefinition | undefined {
    return [...this.defs.values()].find((d) => d.name === name);
  }

  createDefinition(input: unknown): SimAttributeDefinition {
    const d = checkDefinition(input);
    if (this.definitionByName(d.name)) throw new HttpError(409, `user attribute ${d.name} already exists`);
    const def: SimAttributeDefinition = { id: randomUUID(), ...d };
    this.defs.set(def.id, def);
    return def;
  }

  updateDefinition(id: string, input: unknown): SimAttributeDefinition {
    const current = this.defs.get(id);
    if (!current) throw new HttpError(404, `user attribute ${id} not found`);
    const d = checkDefinition(input);
    const other = this.definitionByName(d.name);
    if (other && other.id !== id) throw new HttpError(409, `user attribute ${d.name} already exists`);
    if (d.type !== current.type && [...this.vals.values()].some((m) => m.has(id))) {
      throw new HttpError(400, `the type of user attribute ${current.name} cannot change while users have values`);
    }
    const next: SimAttributeDefinition = { id, ...d };
    this.defs.set(id, next);
    return next;
  }

  deleteDefinition(id: string): void {
    this.defs.delete(id);
    for (const m of this.vals.values()) m.delete(id);
  }

  /** A user's values by attribute name (test convenience). */
  valuesOf(userId: string): Record<string, SimAttributeValue> {
    const out: Record<string, SimAttributeValue> = {};
    for (const [attrId, v] of this.vals.get(userId) ?? []) {
      const d = this.defs.get(attrId);
      if (d) out[d.name] = v;
    }
    return out;
  }

  /** Sets (or with null clears) a value, validating user, attribute and type like the route. */
  setValue(userId: string, attributeId: string, value: unknown): void {
    if (!this.store.getUser(userId)) throw new HttpError(404, `user ${userId} not found`);
    const def = this.defs.get(attributeId);
    if (!def) throw new HttpError(404, `user attribute ${attributeId} not found`);
    if (value === null) {
      this.vals.get(userId)?.delete(attributeId);
      return;
    }
    const problem = typeProblem(def.type, value);
    if (problem) throw new HttpError(400, `value of user attribute ${def.name} (${def.type}) ${problem}`);
    const m = this.vals.get(userId) ?? new Map<string, SimAttributeValue>();
    this.vals.set(userId, m);
    m.set(attributeId, value as SimAttributeValue);
  }

  /** Test convenience: set by attribute name. */
  setValueByName(userId: string, name: string, value: unknown): void {
    const def = this.definitionByName(name);
    if (!def) throw new Error(`no user attribute ${name}`);
    this.setValue(userId, def.id, value);
  }

  handle(req: SimRequest, tokens: ReadonlyMap<string, SimulatorToken>): JsonResponse | undefined {
    const path = req.path.replace(/\/+$/, '');
    const isDefs = path === USER_ATTRIBUTES_PATH || path.startsWith(`${USER_ATTRIBUTES_PATH}/`);
    const isVals = path === USER_ATTRIBUTE_VALUES_PATH || path.startsWith(`${USER_ATTRIBUTE_VALUES_PATH}/`);
    if (!isDefs && !isVals) return undefined;
    const auth = authenticatePlatform(req.headers.authorization, tokens, USER_ATTRIBUTES_PERMISSION);
    if (!auth.ok) return platformError(auth.status, auth.message);
    try {
      return isDefs ? this.routeDefinitions(req, path) : this.routeValues(req, path);
    } catch (e) {
      if (e instanceof HttpError) return platformError(e.status, e.message);
      throw e;
    }
  }

  private routeDefinitions(req: SimRequest, path: string): JsonResponse {
    const rest = path.slice(USER_ATTRIBUTES_PATH.length).split('/').filter(Boolean);
    if (rest.length === 0) {
      if (req.method === 'GET') return this.list(req, this.definitions(), 'userAttributes');
      if (req.method === 'POST') return json(201, this.createDefinition(body(req)));
      throw new HttpError(405, `${req.method} is not allowed on ${USER_ATTRIBUTES_PATH}/`);
    }
    if (rest.length !== 1) throw new HttpError(404, `Not found: ${req.method} ${req.path}`);
    const id = decodeURIComponent(rest[0] as string);
    if (req.method === 'PUT') return json(200, this.updateDefinition(id, body(req)));
    if (req.method === 'GET') {
      const d = this.defs.get(id);
      if (!d) throw new HttpError(404, `user attribute ${id} not found`);
      return json(200, d);
    }
    throw new HttpError(405, `${req.method} is not allowed on ${USER_ATTRIBUTES_PATH}/{id}`);
  }

  private routeValues(req: SimRequest, path: string): JsonResponse {
    const rest = path.slice(USER_ATTRIBUTE_VALUES_PATH.length).split('/').filter(Boolean);
    if (rest.length === 0) {
      if (req.method !== 'POST') throw new HttpError(405, `${req.method} is not allowed on ${USER_ATTRIBUTE_VALUES_PATH}/`);
      const b = body(req);
      if (!isObj(b)) throw new HttpError(400, 'the body must be an object { userId, attributeId, value }');
      const { userId, attributeId } = b;
      if (typeof userId !== 'string' || userId === '') throw new HttpError(400, 'userId is required');
      if (typeof attributeId !== 'string' || attributeId === '') throw new HttpError(400, 'attributeId is required');
      if (!('value' in b)) throw new HttpError(400, 'value is required (null clears it)');
      this.setValue(userId, attributeId, b['value']);
      return json(200, { userId, attributeId, value: b['value'] });
    }
    if (rest.length !== 1 || req.method !== 'GET')
      throw new HttpError(rest.length === 1 ? 405 : 404, `${req.method} is not allowed on ${req.path}`);
    const userId = decodeURIComponent(rest[0] as string);
    if (!this.store.getUser(userId)) throw new HttpError(404, `user ${userId} not found`);
    const items = [...(this.vals.get(userId) ?? [])].map(([attributeId, value]) => ({
      attributeId,
      name: this.defs.get(attributeId)?.name,
      value,
    }));
    return this.list(req, items, 'values');
  }

  private list(req: SimRequest, items: unknown[], key: string): JsonResponse {
    if (this.options.listShape === 'array') return json(200, items);
    const offset = Math.max(0, Number.parseInt(req.query.get('offset') ?? '0', 10) || 0);
    const asked = Number.parseInt(req.query.get('limit') ?? '20', 10);
    const limit = Math.min(this.options.maxPageSize, Number.isInteger(asked) && asked > 0 ? asked : 20);
    return json(200, { data: { [key]: items.slice(offset, offset + limit) }, pagination: { offset, limit, total: items.length } });
  }
}

function checkDefinition(input: unknown): Omit<SimAttributeDefinition, 'id'> {
  if (!isObj(input)) throw new HttpError(400, 'the body must be an object { name, type }');
  const { name, type, description } = input;
  if (typeof name !== 'string' || name.trim() === '') throw new HttpError(400, 'name is required');
  if (typeof type !== 'string' || !TYPES.has(type)) throw new HttpError(400, `type must be one of ${[...TYPES].join(', ')}`);
  if (description !== undefined && typeof description !== 'string') throw new HttpError(400, 'description must be a string');
  return { name, type, ...(typeof description === 'string' ? { description } : {}) };
}

/** Why `value` does not fit `type`, or undefined when it does. */
export function typeProblem(type: string, value: unknown): string | undefined {
  const isNum = (v: unknown): boolean => typeof v === 'number' && Number.isFinite(v);
  switch (type) {
    case 'string':
      return typeof value === 'string' ? undefined : 'must be a string';
    case 'number':
      return isNum(value) ? undefined : 'must be a finite number';
    case 'boolean':
      return typeof value === 'boolean' ? undefined : 'must be true or false';
    case 'string_array':
      return Array.isArray(value) && value.every((v) => typeof v === 'string') ? undefined : 'must be an array of strings';
    case 'number_array':
      return Array.isArray(value) && value.every(isNum) ? undefined : 'must be an array of finite numbers';
    default:
      return `has an unknown type ${type}`;
  }
}

function body(req: SimRequest): unknown {
  if (req.bodyInvalid) throw new HttpError(400, 'request body is not valid JSON');
  if (req.body === undefined) throw new HttpError(400, 'request body is required');
  return req.body;
}

function json(status: number, value: unknown): JsonResponse {
  return { status, headers: { 'content-type': 'application/json; charset=utf-8' }, json: value };
}

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
