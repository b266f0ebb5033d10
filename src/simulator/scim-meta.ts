/** Discovery endpoints (RFC 7644 §4): ServiceProviderConfig, ResourceTypes, Schemas — minimal but truthful. */
import { SCHEMA_ENTERPRISE_USER, SCHEMA_GROUP, SCHEMA_LIST, SCHEMA_SPC, SCHEMA_USER } from '../platform/scim/types.ts';
import type { JsonResponse } from './http-io.ts';
import { notFound } from './scim-error.ts';
import { SCIM_PREFIX } from './store.ts';

export interface MetaEnv {
  baseUrl: string;
  maxPageSize: number;
  patchSupported: boolean;
  serviceProviderConfig: boolean;
}

function list(resources: unknown[]): JsonResponse {
  return {
    status: 200,
    json: { schemas: [SCHEMA_LIST], totalResults: resources.length, startIndex: 1, itemsPerPage: resources.length, Resources: resources },
  };
}

function resourceTypes(env: MetaEnv): Record<string, unknown>[] {
  const rt = 'urn:ietf:params:scim:schemas:core:2.0:ResourceType';
  return [
    {
      schemas: [rt],
      id: 'User',
      name: 'User',
      endpoint: '/Users',
      schema: SCHEMA_USER,
      schemaExtensions: [{ schema: SCHEMA_ENTERPRISE_USER, required: false }],
      meta: { resourceType: 'ResourceType', location: `${env.baseUrl}${SCIM_PREFIX}/ResourceTypes/User` },
    },
    {
      schemas: [rt],
      id: 'Group',
      name: 'Group',
      endpoint: '/Groups',
      schema: SCHEMA_GROUP,
      meta: { resourceType: 'ResourceType', location: `${env.baseUrl}${SCIM_PREFIX}/ResourceTypes/Group` },
    },
  ];
}

function attr(name: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name,
    type: 'string',
    multiValued: false,
    required: false,
    caseExact: false,
    mutability: 'readWrite',
    returned: 'default',
    uniqueness: 'none',
    ...extra,
  };
}

function schemas(): Record<string, unknown>[] {
  const sch = 'urn:ietf:params:scim:schemas:core:2.0:Schema';
  return [
    {
      schemas: [sch],
      id: SCHEMA_USER,
      name: 'User',
      attributes: [
        attr('userName', { required: true, uniqueness: 'server' }),
        attr('displayName'),
        attr('active', { type: 'boolean' }),
        attr('emails', { type: 'complex', multiValued: true }),
        attr('name', { type: 'complex' }),
        attr('groups', { type: 'complex', multiValued: true, mutability: 'readOnly' }),
      ],
    },
    {
      schemas: [sch],
      id: SCHEMA_GROUP,
      name: 'Group',
      attributes: [attr('displayName', { required: true, uniqueness: 'server' }), attr('members', { type: 'complex', multiValued: true })],
    },
    {
      schemas: [sch],
      id: SCHEMA_ENTERPRISE_USER,
      name: 'EnterpriseUser',
      attributes: [attr('department'), attr('employeeNumber'), attr('manager', { type: 'complex' })],
    },
  ];
}

/** `rest` is the path below the SCIM prefix; undefined when it is not a discovery endpoint. */
export function handleMeta(rest: string, env: MetaEnv): JsonResponse | undefined {
  const [, top, id] = rest.split('/');
  if (top === 'ServiceProviderConfig' && id === undefined) {
    if (!env.serviceProviderConfig) throw notFound('ServiceProviderConfig');
    return {
      status: 200,
      json: {
        schemas: [SCHEMA_SPC],
        patch: { supported: env.patchSupported },
        bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
        filter: { supported: true, maxResults: env.maxPageSize },
        changePassword: { supported: false },
        sort: { supported: false },
        etag: { supported: true },
        authenticationSchemes: [
          { type: 'oauthbearertoken', name: 'Bearer token', description: 'API key sent as Bearer (or Api-Key) token' },
        ],
        meta: { resourceType: 'ServiceProviderConfig', location: `${env.baseUrl}${SCIM_PREFIX}/ServiceProviderConfig` },
      },
    };
  }
  if (top === 'ResourceTypes' || top === 'Schemas') {
    const all = top === 'ResourceTypes' ? resourceTypes(env) : schemas();
    if (id === undefined) return list(all);
    const one = all.find((r) => r['id'] === decodeURIComponent(id));
    if (!one) throw notFound(`${top} ${id}`);
    return { status: 200, json: one };
  }
  return undefined;
}
