/**
 * What the reconcile engine needs from the platform. `ScimClient` (platform/scim/client.ts)
 * implements it; keeping the engine on this narrow interface keeps it free of HTTP details.
 */
import type { ListProjection } from '../platform/scim/client.ts';
import type { NewResource, PatchOperation, ResourceType, ScimGroup, ScimUser } from '../platform/scim/types.ts';

export interface CreateOutcome<T> {
  resource: T;
  /** An existing object was returned instead of a new one (409, or our ambiguous POST had succeeded). */
  adopted: boolean;
  /** 'created': our create succeeded but the answer held no id, so the object was looked up. */
  via?: 'conflict' | 'ambiguous' | 'created';
}

export interface ScimTarget {
  /** With `attributes`: only `id` and those top-level attributes are kept of each object listed. */
  listUsers(signal?: AbortSignal, opts?: ListProjection): Promise<ScimUser[]>;
  listGroups(signal?: AbortSignal, opts?: ListProjection): Promise<ScimGroup[]>;
  /** One object by id; undefined when the server answers 404 (confirms a managed object is gone). */
  get<T extends ScimUser | ScimGroup>(type: ResourceType, id: string, signal?: AbortSignal): Promise<T | undefined>;
  /** The same, typed per resource: one user or group by id, undefined on 404. */
  getUser(id: string, signal?: AbortSignal): Promise<ScimUser | undefined>;
  getGroup(id: string, signal?: AbortSignal): Promise<ScimGroup | undefined>;
  /** The objects an (escaped, filter.ts) SCIM filter selects, without a full listing; E_UNSUPPORTED when the server cannot filter. */
  query<T extends ScimUser | ScimGroup>(type: ResourceType, filter: string, signal?: AbortSignal): Promise<T[]>;
  createUser(body: NewResource<ScimUser>): Promise<CreateOutcome<ScimUser>>;
  createGroup(body: NewResource<ScimGroup>): Promise<CreateOutcome<ScimGroup>>;
  patch(type: ResourceType, id: string, ops: PatchOperation[]): Promise<void>;
  patchMembers(groupId: string, add: string[], remove: string[]): Promise<void>;
  delete(type: ResourceType, id: string): Promise<void>;
}
