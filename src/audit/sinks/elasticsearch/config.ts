import { z } from 'zod';
import { sinkBase } from '../common-config.ts';
import { oneOf } from '../secrets.ts';
import { basicSchema } from '../http/config.ts';
import { tlsSchema } from '../tls.ts';
import { refineSinkUrl } from '../url.ts';
import { checkIndexPattern } from './index-pattern.ts';

const apiKeySchema = z
  .strictObject({
    type: z.literal('api-key'),
    /** The encoded API key (base64 of `id:api_key`), as Elasticsearch returns it in `encoded`. */
    apiKey: z.string().min(1).optional(),
    apiKeyFile: z.string().min(1).optional(),
  })
  .refine((a) => oneOf(a, 'apiKey'), { message: 'api-key auth needs exactly one of apiKey or apiKeyFile', path: ['apiKey'] });

/** Elasticsearch or OpenSearch `_bulk` with `create` + `_id` = event key: idempotent. */
export const elasticsearchSinkSchema = z
  .strictObject({
    type: z.literal('elasticsearch'),
    ...sinkBase({ maxEvents: 1000, maxBytes: 5 * 1024 * 1024 }),
    /** `opensearch` changes nothing on the wire; it documents the target and names it in messages. */
    flavor: z.enum(['elasticsearch', 'opensearch']).default('elasticsearch'),
    /** Cluster URL, e.g. https://es.example.com:9200 (a proxy path prefix is kept). */
    url: z.string().min(1),
    /** Index or data stream; `%{+yyyy.MM.dd}` takes the date from the event timestamp (UTC). */
    index: z
      .string()
      .min(1)
      .default('platform-audit-%{+yyyy.MM.dd}')
      .superRefine((v, ctx) => {
        const problem = checkIndexPattern(v);
        if (problem) ctx.addIssue({ code: 'custom', message: problem });
      }),
    /** Ingest pipeline to run on every document. */
    pipeline: z.string().min(1).optional(),
    auth: z.discriminatedUnion('type', [basicSchema, apiKeySchema]).optional(),
    compression: z.enum(['none', 'gzip']).default('none'),
    timeoutSeconds: z.number().positive().max(600).default(60),
    allowInsecureHttp: z.boolean().default(false),
    tls: tlsSchema,
  })
  .superRefine(refineSinkUrl);
export type ElasticsearchSinkConfig = z.infer<typeof elasticsearchSinkSchema>;
