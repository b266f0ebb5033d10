/**
 * SCIM 2.0 resource endpoints for /Users and /Groups (RFC 7644 §3): list with filter and
 * paging, get, create, replace, patch, delete. Handlers return a response value and throw
 * ScimHttpError; the server renders errors and applies faults around them.
 */
import { randomUUID } from 'node:crypto';
import { SCHEMA_LIST, type ScimResource } from '../platform/scim/types.ts';
import type { JsonResponse, SimRequest } from './http-io.ts';
import { pageRequest, paginate } from './paging.ts';
import { applyPatch, type PatchContext } from './patch.ts';
import { ScimHttpError, notFound } from './scim-error.ts';
import { selectResources } from './scim-filter.ts';
import { projectionFrom, render, type Projection } from './scim-render.ts';
import { hasEscapedValue, type ServerQuirk } from './quirks.ts';
import type { SimStore } from './store.ts';
import type { FaultRule, ListPageEvent } from './types.ts';

export interface ScimEnv {
  store: SimStore;
  maxPageSize: number;
  patchSupported: boolean;
  patch: Omit<PatchContext, 'resourceType'>;
  quirks: ReadonlySet<ServerQuirk>;
  afterListPage?: (e: ListPageEvent) => void;
}

type Endpoint = 'Users' | 'Groups';

function single(store: SimStore, r: ScimResource, status = 200, p?: Projection): JsonResponse {
  const headers: Record<string, string> = {};
  if (r.meta?.version) headers['etag'] = r.meta.version;
  if (status === 201 && r.meta?.location) headers['location'] = r.meta.location;
  return { status, headers, json: render(store, r, p) };
}

function getOne(store: SimStore, ep: Endpoint, id: string): ScimResource {
  const r = ep === 'Users' ? store.getUser(id) : store.getGroup(id);
  if (!r) throw notFound(`${ep === 'Users' ? 'User' : 'Group'} ${id}`);
  return r;
}

/** If-Match (RFC 7644 §3.14): a stale version is refused with 412. */
function checkIfMatch(req: SimRequest, r: ScimResource): void {
  const want = req.headers['if-match'];
  if (typeof want !== 'string' || want.trim() === '*') return;
  const versions = want.split(',').map((v) => v.trim());
  if (!versions.includes(r.meta?.version ?? '')) throw new ScimHttpError(412, `resource version is ${r.meta?.version}, not ${want}`);
}

function requireBody(req: SimRequest): unknown {
  if (req.bodyInvalid) throw new ScimHttpError(400, 'request body is not valid JSON', 'invalidSyntax');
  if (req.body === undefined) throw new ScimHttpError(400, 'request body is required', 'invalidSyntax');
  return req.body;
}

/** Injected drift for the mutate-between-pages fault. */
function mutate(store: SimStore, ep: Endpoint, rule: FaultRule): void {
  const tag = randomUUID().slice(0, 8);
  if (rule.mutation === 'churn') {
    // One leaves from the front, one joins at the end: same totalResults, every later offset moves back.
    const first = store.collection(ep).all()[0];
    if (first) {
      if (ep === 'Users') store.deleteUser(first.id);
      else store.deleteGroup(first.id);
    }
    if (ep === 'Users') store.createUser({ userName: `churn-${tag}@example.com`, displayName: `Churn ${tag}`, active: true });
    else store.createGroup({ displayName: `Churn group ${tag}` });
    return;
  }
  if (rule.mutation === 'insert') {
    if (ep === 'Users')
      store.createUser({ userName: `drift-${tag}@example.com`, displayName: `Drift ${tag}`, active: true }, { atFront: true });
    else store.createGroup({ displayName: `Drift group ${tag}` }, { atFront: true });
    return;
  }
  const first = store.collection(ep).all()[0];
  if (!first) return;
  if (ep === 'Users') store.deleteUser(first.id);
  else store.deleteGroup(first.id);
}

function list(env: ScimEnv, ep: Endpoint, params: URLSearchParams, faults: FaultRule[]): JsonResponse {
  const filter = params.get('filter') ?? undefined;
  if (filter !== undefined && env.quirks.has('reject-escaped-filter') && hasEscapedValue(filter)) {
    throw new ScimHttpError(400, 'escaped characters in filter values are not supported', 'invalidFilter');
  }
  const selected = selectResources<ScimResource>(env.store.collection(ep), filter, { caseExact: env.quirks.has('case-sensitive-eq') });
  const asked = pageRequest(params.get('startIndex'), params.get('count'), env.maxPageSize);
  // scimmy: past the end, the first page again (instead of an empty one).
  const req = env.quirks.has('repeat-first-page') && asked.startIndex > selected.length ? { ...asked, startIndex: 1 } : asked;
  const page = paginate(selected, req, faults);
  const projection = projectionFrom(params);
  const json = {
    schemas: [SCHEMA_LIST],
    totalResults: page.totalResults,
    startIndex: page.startIndex,
    itemsPerPage: page.itemsPerPage,
    Resources: page.resources.map((r) => render(env.store, r, projection)),
  };
  env.afterListPage?.({
    resourceType: ep,
    startIndex: asked.startIndex,
    returned: page.resources.length,
    totalResults: page.totalResults,
    filter,
    store: env.store,
  });
  for (const rule of faults) if (rule.kind === 'mutate-between-pages') mutate(env.store, ep, rule);
  return { status: 200, json };
}

/** POST /.search (RFC 7644 §3.4.3): the query travels in the body. */
function searchParams(body: unknown): URLSearchParams {
  const params = new URLSearchParams();
  if (typeof body !== 'object' || body === null) return params;
  for (const [k, v] of Object.entries(body)) {
    if (k === 'schemas' || v === undefined || v === null) continue;
    params.set(k, Array.isArray(v) ? v.join(',') : String(v));
  }
  return params;
}

/** `rest` is the path below the SCIM prefix, e.g. '/Users' or '/Groups/<id>'. */
export function handleResources(req: SimRequest, rest: string, env: ScimEnv, faults: FaultRule[]): JsonResponse | undefined {
  const parts = rest.split('/').filter(Boolean);
  const ep = parts[0];
  if (ep !== 'Users' && ep !== 'Groups') return undefined;
  const { store } = env;
  const resourceType = ep === 'Users' ? 'User' : 'Group';
  if (parts.length === 1) {
    if (req.method === 'GET') return list(env, ep, req.query, faults);
    if (req.method === 'POST') {
      const body = requireBody(req);
      const created =
        ep === 'Users'
          ? store.createUser(body as Record<string, unknown>, { strictSchemas: true })
          : store.createGroup(body as Record<string, unknown>, { strictSchemas: true });
      if (env.quirks.has('created-without-body')) return { status: 201 };
      if (env.quirks.has('created-without-id')) {
        const { id: _id, meta: _meta, ...rest } = render(store, created) as Record<string, unknown>;
        return { status: 201, json: rest };
      }
      return single(store, created, 201);
    }
    throw new ScimHttpError(405, `${req.method} is not allowed on /${ep}`);
  }
  if (parts.length !== 2) return undefined;
  const id = decodeURIComponent(parts[1] as string);
  if (id === '.search' && req.method === 'POST') return list(env, ep, searchParams(requireBody(req)), faults);
  switch (req.method) {
    case 'GET':
      return single(store, getOne(store, ep, id), 200, projectionFrom(req.query));
    case 'PUT': {
      const body = requireBody(req);
      checkIfMatch(req, getOne(store, ep, id));
      const r =
        ep === 'Users' ? store.replaceUser(id, body, { strictSchemas: true }) : store.replaceGroup(id, body, { strictSchemas: true });
      return single(store, r);
    }
    case 'PATCH': {
      if (!env.patchSupported) throw new ScimHttpError(501, 'PATCH is not supported by this service provider');
      const body = requireBody(req);
      const current = getOne(store, ep, id);
      checkIfMatch(req, current);
      const next = applyPatch(current, body, { ...env.patch, resourceType });
      const r = ep === 'Users' ? store.replaceUser(id, next) : store.replaceGroup(id, next);
      return single(store, r);
    }
    case 'DELETE': {
      checkIfMatch(req, getOne(store, ep, id));
      if (ep === 'Users') store.deleteUser(id);
      else store.deleteGroup(id);
      return { status: 204 };
    }
    default:
      throw new ScimHttpError(405, `${req.method} is not allowed on /${ep}/{id}`);
  }
}
