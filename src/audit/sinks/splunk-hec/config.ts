import { z } from 'zod';
import { sinkBase } from '../common-config.ts';
import { oneOf } from '../secrets.ts';
import { tlsSchema } from '../tls.ts';
import { refineSinkUrl } from '../url.ts';

/** Splunk HTTP Event Collector, `/services/collector/event` with the JSON event envelope. */
export const splunkHecSinkSchema = z
  .strictObject({
    type: z.literal('splunk-hec'),
    // ~1 MB uncompressed per request: HEC's default max_content_length is larger, proxies often are not.
    ...sinkBase({ maxEvents: 1000, maxBytes: 1_000_000 }),
    /** HEC base URL, e.g. https://splunk.example.com:8088 (a path prefix of a proxy is kept). */
    url: z.string().min(1),
    token: z.string().min(1).optional(),
    tokenFile: z.string().min(1).optional(),
    /** Envelope metadata; unset fields take the token's defaults. */
    index: z.string().min(1).optional(),
    source: z.string().min(1).default('scim-audit-sync'),
    sourcetype: z.string().min(1).optional(),
    host: z.string().min(1).optional(),
    /** Data channel (a GUID). Generated per process when unset; required by indexer acknowledgement. */
    channel: z.guid().optional(),
    indexerAcknowledgement: z
      .strictObject({
        /** Acknowledge a batch only once Splunk reports it indexed (the token must have ack enabled). */
        enabled: z.boolean().default(false),
        pollIntervalMs: z.number().int().min(10).default(1000),
        /** Give up waiting (and resend the batch) after this long. */
        timeoutSeconds: z.number().positive().default(60),
      })
      .prefault({}),
    compression: z.enum(['none', 'gzip']).default('none'),
    timeoutSeconds: z.number().positive().max(600).default(30),
    allowInsecureHttp: z.boolean().default(false),
    tls: tlsSchema,
  })
  .refine((c) => oneOf(c, 'token'), { message: 'set exactly one of token (e.g. "${HEC_TOKEN}") or tokenFile', path: ['token'] })
  .superRefine(refineSinkUrl);
export type SplunkHecSinkConfig = z.infer<typeof splunkHecSinkSchema>;
