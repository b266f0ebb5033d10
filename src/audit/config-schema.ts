/**
 * The `audit` section: how the audit log is exported, windowed, turned into events and
 * where the events go. Keys carry their unit; defaults live here and nowhere else.
 * Reference with examples: docs/audit.md.
 */
import { z } from 'zod';
import { sinksConfigSchema } from './sinks/schema.ts';
import { isValidTimeZone } from './timestamp.ts';
import type { RetryPolicy } from '../platform/retry.ts';

const DAY_MINUTES = 1440;

const instantSchema = z
  .string()
  .min(1)
  .refine((s) => /^\d{4}-\d{2}-\d{2}$/.test(s) || (/^\d{4}-\d{2}-\d{2}T.*(Z|[+-]\d{2}:?\d{2})$/i.test(s) && !Number.isNaN(Date.parse(s))), {
    message: 'use an ISO 8601 date (2024-01-31) or an instant with its zone (2024-01-31T08:00:00Z)',
  });

export function parseInstant(s: string): number {
  return Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(s) ? `${s}T00:00:00Z` : s);
}

export const auditSchema = z
  .strictObject({
    /** Server-side filters passed to the export as-is. */
    filters: z
      .strictObject({
        eventName: z.string().min(1).optional(),
        userEmail: z.string().min(1).optional(),
        search: z.string().min(1).optional(),
      })
      .prefault({}),
    /** `datetime` sends ISO instants (second precision); `date` sends whole days and filters client-side. */
    precision: z.enum(['date', 'datetime']).default('datetime'),
    /** Length of one export request. Bounds the work redone after a failure. */
    windowMinutes: z
      .number()
      .int()
      .min(1)
      .max(31 * DAY_MINUTES)
      .default(60),
    /** How far back each run re-reads before the cursor, to catch late-arriving events. */
    overlapMinutes: z
      .number()
      .min(0)
      .max(7 * DAY_MINUTES)
      .default(15),
    /** Events younger than this are left for the next run (the platform may still be writing them). */
    settleSeconds: z.number().int().min(0).default(120),
    /** Events handed to the sinks at once. */
    batchSize: z.number().int().min(1).max(10_000).default(500),
    /** Commit progress inside a window after this many events (bounds re-delivery after a crash). */
    checkpointEvents: z.number().int().min(1).default(5000),
    timestamp: z
      .strictObject({
        /** Column holding the event time; detected among common names when absent. */
        column: z.string().min(1).optional(),
        /** Zone of timestamps written without an offset: `UTC`, a fixed offset (`+02:00`) or an IANA name. */
        timezone: z
          .string()
          .min(1)
          .default('UTC')
          .refine(isValidTimeZone, { message: 'use UTC, a fixed offset like +02:00, or an IANA zone like Europe/Paris' }),
      })
      .prefault({}),
    /** Columns for the normalized fields; each is detected among common names when absent. */
    columns: z
      .strictObject({
        /** Unique event id; without one, the key is a SHA-256 of the whole row. */
        id: z.string().min(1).optional(),
        action: z.string().min(1).optional(),
        email: z.string().min(1).optional(),
        ip: z.string().min(1).optional(),
      })
      .prefault({}),
    /**
     * `ecs`: nested `@timestamp`, `event.*`, `user.email`, `source.ip`; `plain`: flat `timestamp`, `id`, `action`, `email`, `ip`;
     * `ocsf`: an OCSF 1.3.0 event of the class that fits the event name, the original row in `raw_data`.
     */
    fieldStyle: z.enum(['ecs', 'plain', 'ocsf']).default('ecs'),
    backfill: z
      .strictObject({
        /** Where the first run starts (no cursor yet). Absent: the first run covers only the last overlapMinutes. */
        from: instantSchema.optional(),
        /** Throttle for multi-window runs; 0 = no limit. */
        maxWindowsPerMinute: z.number().int().min(0).default(0),
      })
      .prefault({}),
    retry: z
      .strictObject({
        /** Attempts per window when the export fails transiently (after the HTTP client's own retries). */
        windowAttempts: z.number().int().min(1).max(20).default(5),
        baseDelayMs: z.number().int().min(1).default(1000),
        maxDelayMs: z.number().int().min(1).default(60_000),
      })
      .prefault({}),
    /** Window digests for `audit verify` (docs/audit.md#verify). */
    verify: z
      .strictObject({
        /** Digests of windows older than this (before the cursor) are forgotten: the state stays bounded. */
        retentionDays: z.number().int().min(1).max(3660).default(30),
      })
      .prefault({}),
    /** Bounds on what one export window may cost, whatever the server sends (docs/audit.md#what-the-export-must-be). */
    limits: z
      .strictObject({
        /** One CSV record (one event, its line breaks included) larger than this fails the window. */
        maxRecordBytes: z
          .number()
          .int()
          .min(1024)
          .default(1024 * 1024),
        /** One window's export body larger than this fails the window. */
        maxWindowMegabytes: z.number().positive().default(4096),
        /** Time one window may wait on the export's server (request and body, not the sinks). */
        windowDeadlineSeconds: z.number().positive().default(1800),
      })
      .prefault({}),
    sinks: sinksConfigSchema,
  })
  .refine((a) => a.precision !== 'date' || a.windowMinutes % DAY_MINUTES === 0, {
    message: `with precision: date, windowMinutes must be whole days (a multiple of ${DAY_MINUTES})`,
    path: ['windowMinutes'],
  });

export type AuditConfig = z.infer<typeof auditSchema>;
export type AuditConfigInput = z.input<typeof auditSchema>;

/** The backoff between attempts of one export window (`audit.retry`), as the retry helpers take it. */
export function windowRetryPolicy(retry: AuditConfig['retry']): RetryPolicy {
  return {
    maxAttempts: retry.windowAttempts,
    baseDelayMs: retry.baseDelayMs,
    maxDelayMs: retry.maxDelayMs,
    maxRetryAfterMs: retry.maxDelayMs,
  };
}
