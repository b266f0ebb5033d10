/**
 * Another SCIM 2.0 server as the source (tenant migration, an IdP that exposes SCIM).
 * The connection keys mirror `platform` on purpose; they are restated rather than imported
 * because config/schema.ts imports the source union (an import cycle).
 */
import { z } from 'zod';
import { contentFile, secretFile } from '../../config/file-refs.ts';
import { listingLimitsSchema } from '../../platform/scim/listing-limits.ts';
import { assertSecureUrl } from '../../platform/secure-url.ts';

export const scimSourceSchema = z
  .strictObject({
    type: z.literal('scim'),
    baseUrl: z.string().url({ protocol: /^https?$/, error: 'must be a URL like https://idp.example.com' }),
    token: z.string().min(1, 'is empty: is the environment variable it comes from set?').optional(),
    /** File holding the token (a mounted secret); trailing newline ignored. */
    tokenFile: secretFile().optional(),
    authScheme: z.enum(['Bearer', 'Api-Key']).default('Bearer'),
    scimPath: z.string().startsWith('/').default('/scim/v2'),
    allowInsecureHttp: z.boolean().default(false),
    caFile: contentFile().optional(),
    timeoutSeconds: z.number().positive().default(30),
    /** Requested page size; the server may cap it (the client follows what it actually gets). */
    pageSize: z.number().int().min(1).max(1000).default(100),
    /** Bounds on one listing of Users or Groups, whatever totalResults claims. */
    listing: listingLimitsSchema,
    /** Read groups too (false: users only). */
    groups: z.boolean().default(true),
    /** An empty user list is an error unless set. */
    allowEmpty: z.boolean().default(false),
  })
  .refine((c) => (c.token === undefined) !== (c.tokenFile === undefined), {
    message: 'set exactly one of token (e.g. "${SOURCE_SCIM_TOKEN}") or tokenFile (a mounted secret file)',
    path: ['token'],
  })
  .superRefine((c, ctx) => {
    try {
      assertSecureUrl(c.baseUrl, c.allowInsecureHttp, 'baseUrl');
    } catch (e) {
      ctx.addIssue({ code: 'custom', path: ['baseUrl'], message: e instanceof Error ? e.message : String(e) });
    }
  });

export type ScimSourceConfig = z.infer<typeof scimSourceSchema>;
export type ScimSourceInput = z.input<typeof scimSourceSchema>;
