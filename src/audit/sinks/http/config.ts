import { z } from 'zod';
import { sinkBase } from '../common-config.ts';
import { oneOf } from '../secrets.ts';
import { tlsSchema } from '../tls.ts';
import { refineSinkUrl } from '../url.ts';

const bearerSchema = z
  .strictObject({
    type: z.literal('bearer'),
    token: z.string().min(1).optional(),
    tokenFile: z.string().min(1).optional(),
  })
  .refine((a) => oneOf(a, 'token'), { message: 'bearer auth needs exactly one of token or tokenFile', path: ['token'] });

export const basicSchema = z
  .strictObject({
    type: z.literal('basic'),
    username: z.string().min(1),
    password: z.string().min(1).optional(),
    passwordFile: z.string().min(1).optional(),
  })
  .refine((a) => oneOf(a, 'password'), { message: 'basic auth needs exactly one of password or passwordFile', path: ['password'] });

export const httpAuthSchema = z.discriminatedUnion('type', [bearerSchema, basicSchema]);

/** Generic JSON batches to any HTTP endpoint (a log pipeline, a webhook collector…). */
export const httpSinkSchema = z
  .strictObject({
    type: z.literal('http'),
    ...sinkBase({ maxEvents: 500, maxBytes: 1024 * 1024 }),
    url: z.string().min(1),
    method: z.enum(['POST', 'PUT']).default('POST'),
    /** `json`: one JSON array per request; `ndjson`: one document per line. */
    format: z.enum(['json', 'ndjson']).default('json'),
    /** Extra request headers (not for credentials: use `auth`). */
    headers: z.record(z.string().min(1), z.string()).default({}),
    auth: httpAuthSchema.optional(),
    compression: z.enum(['none', 'gzip']).default('none'),
    timeoutSeconds: z.number().positive().max(600).default(30),
    /** Plain http:// sends events (and credentials) unencrypted: only for a trusted network. */
    allowInsecureHttp: z.boolean().default(false),
    tls: tlsSchema,
  })
  .superRefine(refineSinkUrl);
export type HttpSinkConfig = z.infer<typeof httpSinkSchema>;
