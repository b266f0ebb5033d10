/**
 * What the reconcile engine needs from the platform. `ScimClient` (platform/scim/client.ts)
 * implements it; keeping the engine on this narrow interface keeps it free of HTTP details.
 */
import type { NewResource, PatchOperation, ResourceType, ScimGroup, ScimUser } from '../platform/scim/types.ts';

export interface ScimTarget {
  listUsers(signal?: AbortSignal): Promise<ScimUser[]>;
  listGroups(signal?: AbortSignal): Promise<ScimGroup[]>;
  createUser(body: NewResource<ScimUser>): Promise<{ resource: ScimUser; adopted: boolean }>;
  createGroup(body: NewResource<ScimGroup>): Promise<{ resource: ScimGroup; adopted: boolean }>;
  patch(type: ResourceType, id: string, ops: PatchOperation[]): Promise<void>;
  patchMembers(groupId: string, add: string[], remove: string[]): Promise<void>;
  delete(type: ResourceType, id: string): Promise<void>;
}
