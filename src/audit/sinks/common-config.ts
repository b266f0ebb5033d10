/**
 * Config pieces every sink shares: its name, the batch bounds and the retry policy.
 * Defaults live here (per sink type where they differ) and nowhere else.
 */
import { z } from 'zod';
import type { RetryPolicy } from '../../platform/retry.ts';

/** Used in metric labels, dead-letter entries and `audit replay --sink NAME`: keep it short and stable. */
export const sinkNameSchema = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, 'a sink name uses lower-case letters, digits, - and _ (max 63 chars)');

export interface BatchDefaults {
  maxEvents: number;
  maxBytes: number;
}

/** Bounds of one request/write; a larger engine batch is split, never truncated. */
export function batchSchema(defaults: BatchDefaults) {
  return z
    .strictObject({
      maxEvents: z.number().int().min(1).max(100_000).default(defaults.maxEvents),
      /** Encoded (uncompressed) bytes per request; one oversized event still goes alone. */
      maxBytes: z
        .number()
        .int()
        .min(1024)
        .max(256 * 1024 * 1024)
        .default(defaults.maxBytes),
    })
    .prefault({});
}

export const sinkRetrySchema = z
  .strictObject({
    /** Total attempts per request, including the first. */
    maxAttempts: z.number().int().min(1).max(50).default(6),
    baseDelayMs: z.number().int().min(1).default(200),
    maxDelayMs: z.number().int().min(1).default(30_000),
    /** Cap for an honoured Retry-After. */
    maxRetryAfterSeconds: z.number().int().min(0).default(120),
  })
  .prefault({});
export type SinkRetryConfig = z.infer<typeof sinkRetrySchema>;

export function toRetryPolicy(r: SinkRetryConfig): RetryPolicy {
  return {
    maxAttempts: r.maxAttempts,
    baseDelayMs: r.baseDelayMs,
    maxDelayMs: r.maxDelayMs,
    maxRetryAfterMs: r.maxRetryAfterSeconds * 1000,
  };
}

/** Fields every sink config starts with. */
export function sinkBase(defaults: BatchDefaults) {
  return {
    name: sinkNameSchema,
    batch: batchSchema(defaults),
    retry: sinkRetrySchema,
  };
}
