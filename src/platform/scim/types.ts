/** SCIM 2.0 wire types (RFC 7643 / 7644) as far as this tool relies on them. */

export const SCHEMA_USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const SCHEMA_GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';
export const SCHEMA_ENTERPRISE_USER = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
export const SCHEMA_LIST = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';
export const SCHEMA_PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
export const SCHEMA_ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error';
export const SCHEMA_SPC = 'urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig';

export type ResourceType = 'Users' | 'Groups';

export interface ScimMeta {
  resourceType?: string;
  created?: string;
  lastModified?: string;
  location?: string;
  version?: string;
}

export interface ScimResource {
  schemas: string[];
  id: string;
  externalId?: string;
  meta?: ScimMeta;
  [attribute: string]: unknown;
}

export interface ScimEmail {
  value: string;
  type?: string;
  primary?: boolean;
}

export interface ScimUser extends ScimResource {
  userName: string;
  name?: { givenName?: string; familyName?: string; formatted?: string };
  displayName?: string;
  emails?: ScimEmail[];
  active?: boolean;
}

export interface ScimMember {
  value: string;
  display?: string;
  $ref?: string;
  type?: string;
}

export interface ScimGroup extends ScimResource {
  displayName: string;
  members?: ScimMember[];
}

/** The declared attributes of a resource type, without its open index signature. */
type KnownAttributes<T> = { [K in keyof T as string extends K ? never : number extends K ? never : K]: T[K] };

/**
 * A resource body before the server assigned an id. (A plain `Omit<T, …>` would collapse to
 * the index signature and lose every declared attribute, hence KnownAttributes.)
 */
export type NewResource<T extends ScimResource> = Omit<KnownAttributes<T>, 'id' | 'meta'> & {
  id?: never;
  [attribute: string]: unknown;
};

export interface ListResponse<T> {
  schemas: string[];
  totalResults: number;
  startIndex?: number;
  itemsPerPage?: number;
  Resources?: T[];
}

export interface PatchOperation {
  op: 'add' | 'remove' | 'replace';
  path?: string;
  value?: unknown;
}

export interface ScimErrorBody {
  schemas: string[];
  status: string;
  scimType?: string;
  detail?: string;
}

export interface ServiceProviderConfig {
  patch?: { supported?: boolean };
  filter?: { supported?: boolean; maxResults?: number };
  bulk?: { supported?: boolean; maxOperations?: number; maxPayloadSize?: number };
  etag?: { supported?: boolean };
}
