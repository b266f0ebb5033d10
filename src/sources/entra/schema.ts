/**
 * `provisioning.source.type: entra-id`: Microsoft Entra ID through Microsoft Graph, as an
 * app registration with application permissions (client credentials). The credential is a
 * client secret or a certificate from a mounted file, or a Kubernetes workload identity
 * (federated token file); it is never inline. Only read permissions are ever needed.
 */
import { z } from 'zod';
import { contentFile, secretFile } from '../../config/file-refs.ts';

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const credentialSchema = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('clientSecret'),
    /** The secret's value (not its id), in a mounted file. */
    clientSecretFile: secretFile(),
  }),
  z.strictObject({
    type: z.literal('certificate'),
    /** PEM with the private key and the certificate uploaded to the app registration. */
    certificateFile: secretFile(),
    /** Send the x5c chain (subject name + issuer authentication, for certificates from a trusted CA). */
    sendCertificateChain: z.boolean().default(false),
  }),
  z.strictObject({
    type: z.literal('workloadIdentity'),
    /** The projected service account token (AKS workload identity sets AZURE_FEDERATED_TOKEN_FILE to this path). */
    tokenFile: z.string().min(1).default('/var/run/secrets/azure/tokens/azure-identity-token'),
  }),
]);

const groupsSchema = z
  .strictObject({
    /** Graph `$filter` on groups, e.g. `startswith(displayName,'app-')`; default all groups. */
    filter: z.string().min(1).optional(),
    /** Exactly these groups (object ids); each must exist or the read fails. */
    ids: z.array(z.string().regex(GUID, 'must be a group object id (GUID)')).min(1).optional(),
    /** Which group kinds: `security` (securityEnabled) and/or `microsoft365` (groupTypes Unified). */
    types: z
      .array(z.enum(['security', 'microsoft365']))
      .min(1)
      .default(['security', 'microsoft365']),
    /**
     * `flatten`: direct members, nested groups walked here (cycles cut); `transitive`: Graph's
     * `/transitiveMembers`; `direct`: direct user members only, nested groups ignored.
     */
    members: z.enum(['flatten', 'transitive', 'direct']).default('flatten'),
  })
  .refine((g) => g.filter === undefined || g.ids === undefined, { message: 'set groups.filter or groups.ids, not both', path: ['ids'] });

export const entraIdSourceSchema = z
  .strictObject({
    type: z.literal('entra-id'),
    /** Directory (tenant) id, a GUID (or the tenant's primary domain). */
    tenantId: z.string().min(1),
    /** Application (client) id of the app registration. */
    clientId: z.string().regex(GUID, 'must be the application (client) id, a GUID'),
    credential: credentialSchema,
    users: z
      .strictObject({
        /** Graph `$filter` on users, e.g. `accountEnabled eq true` or `department eq 'Sales'`. */
        filter: z.string().min(1).optional(),
        /** Only members (transitive) of these groups (object ids), like an enterprise app's "assigned users and groups". */
        assignedGroups: z.array(z.string().regex(GUID, 'must be a group object id (GUID)')).min(1).optional(),
        /** Further user properties to `$select`, e.g. `department`, `jobTitle`, `extension_<appId>_costCenter`. */
        select: z.array(z.string().regex(/^[A-Za-z][\w]*$/, 'must be a Graph property name')).default([]),
        /** `onPremisesExtensionAttributes` (extensionAttribute1-15, synced from AD or set on cloud users). */
        onPremisesExtensionAttributes: z.boolean().default(false),
        /** `customSecurityAttributes` (needs CustomSecAttributeAssignment.Read.All). */
        customSecurityAttributes: z.boolean().default(false),
      })
      .prefault({}),
    /** `false`: users only. */
    groups: z.union([z.literal(false), groupsSchema]).default({ types: ['security', 'microsoft365'], members: 'flatten' }),
    /** Identity platform host; change only for a sovereign cloud or the simulator. */
    authorityHost: z.string().url().default('https://login.microsoftonline.com'),
    /** Microsoft Graph root; change only for a sovereign cloud or the simulator. */
    graphUrl: z.string().url().default('https://graph.microsoft.com'),
    /** Extra CA (PEM) trusted for authorityHost and graphUrl (a TLS-inspecting proxy, the simulator). */
    caFile: contentFile().optional(),
    /** Per request. */
    timeoutSeconds: z.number().positive().default(60),
    /** Users and groups per page (`$top`, Graph's maximum is 999). */
    pageSize: z.number().int().min(1).max(999).default(999),
    /** Group member lists read in parallel. */
    concurrency: z.number().int().min(1).max(32).default(4),
    /** Backoff for throttling (429, 503 with Retry-After) and 5xx, per request. */
    retry: z
      .strictObject({
        maxAttempts: z.number().int().min(1).max(20).default(8),
        baseDelayMs: z.number().int().min(1).default(1000),
        maxDelayMs: z.number().int().min(1).default(64_000),
      })
      .prefault({}),
    /** An empty user list is an error unless set. */
    allowEmpty: z.boolean().default(false),
  })
  .superRefine((c, ctx) => {
    for (const key of ['authorityHost', 'graphUrl'] as const) {
      if (!URL.canParse(c[key]) || new URL(c[key]).protocol !== 'https:')
        ctx.addIssue({ code: 'custom', path: [key], message: `${key} must be https:// (the identity libraries refuse anything else)` });
    }
  });

export type EntraIdSourceConfig = z.infer<typeof entraIdSourceSchema>;
export type EntraIdSourceInput = z.input<typeof entraIdSourceSchema>;

/** The Graph application permissions a config needs (least privilege). */
export function permissionsFor(c: Pick<EntraIdSourceConfig, 'groups' | 'users'>): string[] {
  const out = ['User.Read.All'];
  if (c.groups !== false || c.users.assignedGroups !== undefined) out.push('GroupMember.Read.All');
  if (c.users.customSecurityAttributes) out.push('CustomSecAttributeAssignment.Read.All');
  return out;
}
