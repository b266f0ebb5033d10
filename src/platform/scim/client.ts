/**
 * The SCIM 2.0 client the reconcile engine talks to: listing, lookup, safe create (409 or an
 * ambiguous failure → look up and adopt), replace, PATCH with a PUT fallback, membership
 * deltas and delete. Transport, retries and status classification live in PlatformClient.
 */
import { ErrorCodes, SyncError, errorFromStatus, isSyncError } from '../../errors.ts';
import { AmbiguousRequestError, type JsonResponse, type PlatformClient } from '../http-client.ts';
import { sleep } from '../retry.ts';
import { Tester } from 'scim2-parse-filter';
import { parseFilter } from './filter.ts';
import { applyMemberDelta, memberPatchRequests, type MemberRemoveDialect } from './members.ts';
import { compactGroup, compactUser, projection, type Intern } from './compact.ts';
import { applyPatch } from './patch-apply.ts';
import { listAllPages, type Page, type PagingLimits } from './paging.ts';
import { asListPage, asResource, asServiceProviderConfig, createdResource } from './response.ts';
import { resolveExisting, type Wanted } from './resolve.ts';
import {
  SCHEMA_ENTERPRISE_USER,
  SCHEMA_GROUP,
  SCHEMA_PATCH,
  SCHEMA_USER,
  type NewResource,
  type PatchOperation,
  type ResourceType,
  type ScimGroup,
  type ScimResource,
  type ScimUser,
  type ServiceProviderConfig,
} from './types.ts';

export interface ScimClientOptions {
  /** e.g. '/api/scim/v2' */
  scimPath: string;
  /** Requested count per page (the server may cap it). */
  pageSize: number;
  /** Chunk size for membership PATCHes, member values per request. */
  maxMembersPerPatch: number;
  memberRemoveDialect: MemberRemoveDialect;
  /** `auto`: PATCH unless the SPC or a 501/405 says otherwise; `patch`: always; `put`: never. */
  updateMethod: 'auto' | 'patch' | 'put';
  /** Read /ServiceProviderConfig once to adapt. */
  discover: boolean;
  /** Paging robustness knobs (tests shorten the probe delay). */
  paging?: Partial<PagingLimits>;
  /** POST attempts when a create keeps failing ambiguously and the lookup finds nothing. */
  maxCreateAttempts?: number;
}

export interface ListOptions {
  filter?: string;
  excludedAttributes?: string[];
  signal?: AbortSignal;
  /** After each page: the number of objects not seen before. */
  onPage?: (n: number) => void;
  /** Applied to each resource as its page arrives, before it is kept (see compact.ts). */
  compact?: (resource: ScimResource) => ScimResource;
}

export interface ListProjection {
  /** Keep only `id` and these top-level attributes of each listed object (case-insensitive). */
  attributes?: readonly string[];
  /** Ids and member values kept once across listings that share it (compact.ts createIntern). */
  intern?: Intern;
  /** After each page: the number of objects not seen before (a progress display). */
  onPage?: (n: number) => void;
}

export interface CreateResult<T> {
  resource: T;
  /** True when an existing object was returned instead of a new one being created. */
  adopted: boolean;
  /**
   * How the object was found instead of read from the answer: the server said 409, our POST
   * failed ambiguously and the object turned up, or the server's 201 held no id ('created').
   */
  via?: 'conflict' | 'ambiguous' | 'created';
}

const ROUTE: Record<ResourceType, string> = { Users: 'scim_users', Groups: 'scim_groups' };
const NOUN: Record<ResourceType, string> = { Users: 'user', Groups: 'group' };
const CORE_SCHEMA: Record<ResourceType, string> = { Users: SCHEMA_USER, Groups: SCHEMA_GROUP };
const PUT_ATTEMPTS = 3;

export class ScimClient {
  private readonly http: PlatformClient;
  private readonly opts: ScimClientOptions;
  private spc: Promise<ServiceProviderConfig | undefined> | undefined;
  /** Learned from a 501/405: no more PATCH attempts for the rest of the run. */
  private patchRefused = false;

  constructor(http: PlatformClient, opts: ScimClientOptions) {
    this.http = http;
    this.opts = { ...opts, scimPath: opts.scimPath.replace(/\/+$/, '') };
  }

  /** This client over a read-only view of its connection: every write fails with E_READ_ONLY before it is sent. */
  readOnly(): ScimClient {
    const view = new ScimClient(this.http.readOnlyView(), this.opts);
    view.spc = this.spc;
    view.patchRefused = this.patchRefused;
    return view;
  }

  /** Cached; undefined when discovery is off or the server has none. Only auth failures propagate. */
  serviceProviderConfig(): Promise<ServiceProviderConfig | undefined> {
    if (!this.opts.discover) return Promise.resolve(undefined);
    this.spc ??= this.http
      .requestJson<unknown>('GET', `${this.opts.scimPath}/ServiceProviderConfig`, { route: 'scim_spc', what: 'read ServiceProviderConfig' })
      .then((res) => asServiceProviderConfig(res.body))
      .catch((e: unknown) => {
        // Optional document: absent (404), refused or broken means "assume defaults";
        // a bad credential is fatal and will fail every other call too.
        if (isSyncError(e) && e.kind === 'fatal') throw e;
        return undefined;
      });
    return this.spc;
  }

  async listAll<T extends ScimResource>(type: ResourceType, opts: ListOptions = {}): Promise<T[]> {
    const spc = await this.serviceProviderConfig();
    const pageSize = Math.max(1, Math.min(this.opts.pageSize, spc?.filter?.maxResults ?? Infinity));
    // A server that cannot filter: list everything and filter here (case-exact comparisons).
    const localFilter = opts.filter !== undefined && spc?.filter?.supported === false ? parseFilter(opts.filter) : undefined;
    const serverFilter = localFilter === undefined ? opts.filter : undefined;
    const all = await listAllPages<T>({
      fetchPage: async (startIndex, count, signal) => {
        const page = await this.fetchPage<T>(type, startIndex, count, serverFilter, opts.excludedAttributes, signal ?? opts.signal);
        const { compact } = opts;
        return compact ? { ...page, resources: page.resources.map((r) => compact(r) as T) } : page;
      },
      pageSize,
      what: `list ${type}`,
      ...(this.opts.paging ? { limits: this.opts.paging } : {}),
      ...(opts.signal ? { signal: opts.signal } : {}),
      ...(opts.onPage ? { onPage: opts.onPage } : {}),
    });
    if (localFilter === undefined) return all;
    const tester = new Tester();
    return all.filter((r) => tester.test(r, localFilter));
  }

  /**
   * Every user, without server bookkeeping (meta, read-only groups); with `attributes`, only
   * `id` and those top-level attributes (see compact.ts).
   */
  listUsers(signal?: AbortSignal, opts: ListProjection = {}): Promise<ScimUser[]> {
    const project = opts.attributes ? projection(opts.attributes) : undefined;
    return this.listAll<ScimUser>('Users', {
      compact: (r) => compactUser(r as ScimUser, project, opts.intern),
      ...(signal ? { signal } : {}),
      ...(opts.onPage ? { onPage: opts.onPage } : {}),
    });
  }

  /** Groups with their members (member `value` and `type` only), without meta; `attributes` as for users. */
  listGroups(signal?: AbortSignal, opts: ListProjection = {}): Promise<ScimGroup[]> {
    const project = opts.attributes ? projection(opts.attributes) : undefined;
    return this.listAll<ScimGroup>('Groups', {
      compact: (r) => compactGroup(r as ScimGroup, project, opts.intern),
      ...(signal ? { signal } : {}),
      ...(opts.onPage ? { onPage: opts.onPage } : {}),
    });
  }

  async get<T extends ScimResource>(type: ResourceType, id: string, signal?: AbortSignal): Promise<T | undefined> {
    const what = `read ${NOUN[type]} ${id}`;
    try {
      const res = await this.http.requestJson<unknown>('GET', this.itemPath(type, id), {
        route: ROUTE[type],
        what,
        ...(signal ? { signal } : {}),
      });
      return asResource<T>(res.body, what);
    } catch (e) {
      if (isSyncError(e) && e.code === ErrorCodes.NOT_FOUND) return undefined;
      throw e;
    }
  }

  /** One user by id; undefined when the server says 404 (deleted). */
  getUser(id: string, signal?: AbortSignal): Promise<ScimUser | undefined> {
    return this.get<ScimUser>('Users', id, signal);
  }

  /** One group by id, with its members; undefined on 404. */
  getGroup(id: string, signal?: AbortSignal): Promise<ScimGroup | undefined> {
    return this.get<ScimGroup>('Groups', id, signal);
  }

  /**
   * The objects one filter selects, by the server's filtering only: never a full listing.
   * A server that says it cannot filter fails with E_UNSUPPORTED (the caller falls back to
   * its own full read). Build `filter` with filter.ts (escaped values).
   */
  async query<T extends ScimResource>(type: ResourceType, filter: string, signal?: AbortSignal): Promise<T[]> {
    const spc = await this.serviceProviderConfig();
    if (spc?.filter?.supported === false) {
      throw new SyncError(ErrorCodes.UNSUPPORTED, 'rejected', `filter ${type}: the server does not support filtering`);
    }
    return this.listAll<T>(type, { filter, ...(signal ? { signal } : {}) });
  }

  /**
   * By externalId (exact), then userName (case-insensitive, exact spelling preferred), then a
   * full listing if the server refuses the filter: see resolve.ts. Several candidates throw
   * E_AMBIGUOUS_MATCH. `mustExist` (the server said so): list everything before saying none.
   */
  findUser(by: { externalId?: string; userName?: string }, opts: { mustExist?: boolean } = {}): Promise<ScimUser | undefined> {
    const who: Wanted = {
      externalId: by.externalId || undefined,
      name: by.userName,
      nameAttr: 'userName',
      label: `user ${by.userName ?? by.externalId ?? '?'}`,
    };
    return this.resolve<ScimUser>('Users', who, opts.mustExist === true);
  }

  /** By externalId (exact), then displayName, as findUser. Members included. */
  findGroup(by: { externalId?: string; displayName?: string }, opts: { mustExist?: boolean } = {}): Promise<ScimGroup | undefined> {
    const who: Wanted = {
      externalId: by.externalId || undefined,
      name: by.displayName,
      nameAttr: 'displayName',
      label: `group ${by.displayName ?? by.externalId ?? '?'}`,
    };
    return this.resolve<ScimGroup>('Groups', who, opts.mustExist === true);
  }

  createUser(body: NewResource<ScimUser>): Promise<CreateResult<ScimUser>> {
    const who: Wanted = {
      externalId: body.externalId || undefined,
      name: body.userName,
      nameAttr: 'userName',
      label: `create user ${body.userName}`,
    };
    return this.create<ScimUser>('Users', body, who);
  }

  createGroup(body: NewResource<ScimGroup>): Promise<CreateResult<ScimGroup>> {
    const who: Wanted = {
      externalId: body.externalId || undefined,
      name: body.displayName,
      nameAttr: 'displayName',
      label: `create group ${body.displayName}`,
    };
    return this.create<ScimGroup>('Groups', body, who);
  }

  async replace<T extends ScimResource>(
    type: ResourceType,
    id: string,
    body: NewResource<T> | T,
    headers?: Record<string, string>,
  ): Promise<T> {
    const what = `replace ${NOUN[type]} ${id}`;
    const payload = this.withSchemas(type, { ...(body as Record<string, unknown>), id });
    // Read-only attributes: servers should ignore them, some reject them instead.
    delete payload['meta'];
    if (type === 'Users') delete payload['groups'];
    const res = await this.http.requestJson<unknown>('PUT', this.itemPath(type, id), {
      route: ROUTE[type],
      what,
      body: payload,
      ...(headers ? { headers } : {}),
    });
    return res.body === undefined ? (payload as T) : asResource<T>(res.body, what);
  }

  async patch(type: ResourceType, id: string, ops: PatchOperation[]): Promise<void> {
    if (ops.length === 0) return;
    if (!(await this.usePut())) {
      try {
        await this.sendPatch(type, id, ops);
        return;
      } catch (e) {
        if (!this.mayFallBack(e)) throw e;
      }
    }
    await this.updateViaPut(type, id, (current) => applyPatch(current, ops));
  }

  /** Adds and removes chunked to maxMembersPerPatch values per request; an id in both lists is removed. */
  async patchMembers(groupId: string, add: string[], remove: string[]): Promise<void> {
    if (add.length === 0 && remove.length === 0) return;
    if (!(await this.usePut())) {
      const requests = memberPatchRequests(add, remove, this.opts.memberRemoveDialect, this.opts.maxMembersPerPatch);
      try {
        for (const ops of requests) await this.sendPatch('Groups', groupId, ops);
        return;
      } catch (e) {
        // The whole delta is idempotent, so a PUT after a partial PATCH sequence is safe.
        if (!this.mayFallBack(e)) throw e;
      }
    }
    await this.updateViaPut<ScimGroup>('Groups', groupId, (g) => ({ ...g, members: applyMemberDelta(g.members, add, remove) }));
  }

  /** 404 counts as already deleted. */
  async delete(type: ResourceType, id: string): Promise<void> {
    try {
      await this.http.requestJson<unknown>('DELETE', this.itemPath(type, id), { route: ROUTE[type], what: `delete ${NOUN[type]} ${id}` });
    } catch (e) {
      if (isSyncError(e) && e.code === ErrorCodes.NOT_FOUND) return;
      throw e;
    }
  }

  private collectionPath(type: ResourceType): string {
    return `${this.opts.scimPath}/${type}`;
  }

  private itemPath(type: ResourceType, id: string): string {
    return `${this.collectionPath(type)}/${encodeURIComponent(id)}`;
  }

  private async fetchPage<T extends ScimResource>(
    type: ResourceType,
    startIndex: number,
    count: number,
    filter: string | undefined,
    excluded: string[] | undefined,
    signal: AbortSignal | undefined,
  ): Promise<Page<T>> {
    const what = `list ${type}`;
    const res = await this.http.requestJson<unknown>('GET', this.collectionPath(type), {
      route: ROUTE[type],
      what,
      query: { startIndex, count, filter, excludedAttributes: excluded && excluded.length > 0 ? excluded.join(',') : undefined },
      ...(signal ? { signal } : {}),
    });
    return asListPage<T>(res.body, what, startIndex);
  }

  private async resolve<T extends ScimResource>(type: ResourceType, who: Wanted, mustExist: boolean): Promise<T | undefined> {
    const spc = await this.serviceProviderConfig();
    const count = Math.max(1, Math.min(this.opts.pageSize, spc?.filter?.maxResults ?? Infinity));
    return resolveExisting<T>(
      {
        filterSupported: spc?.filter?.supported !== false,
        query: async (filter) => {
          const page = await this.fetchPage<T>(type, 1, count, filter, undefined, undefined);
          if (page.totalResults <= page.resources.length) return page.resources;
          // More candidates than one page (a server that ignores the filter): read them all.
          return this.listAll<T>(type, { filter });
        },
        listAll: () => this.listAll<T>(type),
      },
      who,
      { mustExist },
    );
  }

  /**
   * POST, and when the answer does not name the object, find it (resolve.ts) before anything
   * counts as failed: a 409 adopts the existing object, a 201 without an id (or body) looks the
   * new one up, a POST whose answer was lost looks before it is sent again (never twice).
   */
  private async create<T extends ScimResource>(type: ResourceType, body: NewResource<T>, who: Wanted): Promise<CreateResult<T>> {
    const what = who.label;
    const max = Math.max(1, this.opts.maxCreateAttempts ?? 3);
    const payload = this.withSchemas(type, { ...(body as Record<string, unknown>) });
    for (let attempt = 1; ; attempt++) {
      let answer: JsonResponse<unknown>;
      try {
        answer = await this.http.requestJson<unknown>('POST', this.collectionPath(type), { route: ROUTE[type], what, body: payload });
      } catch (e) {
        if (!isSyncError(e)) throw e;
        if (e.code === ErrorCodes.CONFLICT) {
          const found = await this.resolve<T>(type, who, true);
          if (found) return { resource: found, adopted: true, via: 'conflict' };
          throw new SyncError(
            ErrorCodes.CONFLICT,
            'conflict',
            `${e.message}; no platform object with this externalId or name was found, not even in a full listing`,
            {
              ...(e.status !== undefined ? { status: e.status } : {}),
              ...(e.detail !== undefined ? { detail: e.detail } : {}),
            },
          );
        }
        if (!(e instanceof AmbiguousRequestError)) throw e;
        // The POST may have been processed: look before trying again, never create twice.
        const found = await this.resolve<T>(type, who, false);
        if (found) return { resource: found, adopted: true, via: 'ambiguous' };
        if (attempt >= max) throw e;
        await sleep(250 * attempt); // ms
        continue;
      }
      const created = createdResource<T>(answer.body);
      if (created) return { resource: created, adopted: false };
      // Created, says the status, but the answer does not tell us its id: find it.
      const found = await this.resolve<T>(type, who, true);
      if (found === undefined) {
        throw new SyncError(
          ErrorCodes.BAD_RESPONSE,
          'transient',
          `${what}: the server answered HTTP ${answer.status} without the new object's id, and no object with this externalId or name was found`,
          { status: answer.status },
        );
      }
      // Ours unless it carries another externalId (then it is treated like a conflict: adopted only if allowed).
      const ours = who.externalId === undefined || found.externalId === who.externalId;
      return { resource: found, adopted: !ours, via: 'created' };
    }
  }

  private async usePut(): Promise<boolean> {
    if (this.opts.updateMethod !== 'auto') return this.opts.updateMethod === 'put';
    if (this.patchRefused) return true;
    const spc = await this.serviceProviderConfig();
    return spc?.patch?.supported === false;
  }

  private mayFallBack(e: unknown): boolean {
    if (this.opts.updateMethod !== 'auto' || !isSyncError(e) || e.code !== ErrorCodes.UNSUPPORTED) return false;
    this.patchRefused = true;
    return true;
  }

  private async sendPatch(type: ResourceType, id: string, ops: PatchOperation[]): Promise<void> {
    await this.http.requestJson<unknown>('PATCH', this.itemPath(type, id), {
      route: ROUTE[type],
      what: `update ${NOUN[type]} ${id}`,
      body: { schemas: [SCHEMA_PATCH], Operations: ops },
    });
  }

  /** GET, change locally, PUT; with If-Match when the server does ETags (412 → read again). */
  private async updateViaPut<T extends ScimResource>(type: ResourceType, id: string, change: (current: T) => T): Promise<void> {
    const spc = await this.serviceProviderConfig();
    for (let attempt = 1; ; attempt++) {
      const current = await this.get<T>(type, id);
      if (current === undefined) throw errorFromStatus(404, `update ${NOUN[type]} ${id}`);
      const version = spc?.etag?.supported === true ? current.meta?.version : undefined;
      try {
        await this.replace<T>(type, id, change(current), version ? { 'if-match': version } : undefined);
        return;
      } catch (e) {
        if (isSyncError(e) && e.status === 412 && attempt < PUT_ATTEMPTS) continue;
        throw e;
      }
    }
  }

  private withSchemas(type: ResourceType, body: Record<string, unknown>): Record<string, unknown> {
    const schemas = Array.isArray(body['schemas']) ? [...(body['schemas'] as string[])] : [];
    if (!schemas.includes(CORE_SCHEMA[type])) schemas.unshift(CORE_SCHEMA[type]);
    if (type === 'Users' && body[SCHEMA_ENTERPRISE_USER] !== undefined && !schemas.includes(SCHEMA_ENTERPRISE_USER))
      schemas.push(SCHEMA_ENTERPRISE_USER);
    return { ...body, schemas };
  }
}
