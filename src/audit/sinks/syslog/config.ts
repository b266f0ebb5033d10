import { hostname } from 'node:os';
import { z } from 'zod';
import { sinkBase } from '../common-config.ts';
import { tlsSchema } from '../tls.ts';

export const FACILITIES = {
  kern: 0,
  user: 1,
  mail: 2,
  daemon: 3,
  auth: 4,
  syslog: 5,
  lpr: 6,
  news: 7,
  uucp: 8,
  cron: 9,
  authpriv: 10,
  ftp: 11,
  ntp: 12,
  security: 13,
  console: 14,
  solaris_cron: 15,
  local0: 16,
  local1: 17,
  local2: 18,
  local3: 19,
  local4: 20,
  local5: 21,
  local6: 22,
  local7: 23,
} as const;

export const SEVERITIES = {
  emerg: 0,
  alert: 1,
  crit: 2,
  err: 3,
  warning: 4,
  notice: 5,
  info: 6,
  debug: 7,
} as const;

const printable = (max: number) =>
  z.string().regex(new RegExp(`^[\\x21-\\x7e]{1,${max}}$`), `printable ASCII without spaces, at most ${max} characters`);

/** Default ports: RFC 5425 (tls), RFC 6587 (tcp), rsyslog's documented RELP port. */
export const DEFAULT_PORTS = { tls: 6514, tcp: 601, relp: 2514 } as const;

/**
 * RFC 5424 messages over TCP or TLS (RFC 6587 / RFC 5425 framing), or over RELP, rsyslog's
 * acknowledged protocol.
 */
export const syslogSinkSchema = z.strictObject({
  type: z.literal('syslog'),
  // One socket write per request, of many frames.
  ...sinkBase({ maxEvents: 500, maxBytes: 1024 * 1024 }),
  protocol: z.enum(['tcp', 'tls', 'relp']).default('tls'),
  host: z.string().min(1),
  /** Default 6514 for tls, 601 for tcp, 2514 for relp. */
  port: z.number().int().min(1).max(65_535).optional(),
  tls: tlsSchema,
  relp: z
    .strictObject({
      /** RELP inside TLS (imrelp `tls="on"`), with the `tls` settings above; librelp wants a client certificate. */
      tls: z.boolean().default(false),
      /** Messages sent and not yet acknowledged, at most (librelp's own default window is 128). */
      windowSize: z.number().int().min(1).max(1024).default(128),
    })
    .prefault({}),
  /** TCP/TLS frames: RFC 6587 octet counting, or a trailing LF (line breaks inside escaped). Not used by RELP. */
  framing: z.enum(['octet-counting', 'lf']).default('octet-counting'),
  /**
   * Largest message sent, in bytes (the syslog message, without the frame's length prefix or
   * LF). 8 KiB is what RFC 5425 says receivers should accept, and rsyslog's default.
   */
  maxMessageBytes: z
    .number()
    .int()
    .min(1024)
    .max(64 * 1024 * 1024)
    .default(8192),
  /** A larger message: `truncate` its longest text fields (marked and counted), or `dead-letter` it. */
  oversize: z.enum(['truncate', 'dead-letter']).default('truncate'),
  facility: z.union([z.enum(Object.keys(FACILITIES) as [keyof typeof FACILITIES]), z.number().int().min(0).max(23)]).default('local0'),
  severity: z.union([z.enum(Object.keys(SEVERITIES) as [keyof typeof SEVERITIES]), z.number().int().min(0).max(7)]).default('info'),
  appName: printable(48).default('scim-audit-sync'),
  hostname: printable(255).default(() => hostname().replace(/[^\x21-\x7e]/g, '') || '-'),
  /** Document field whose value becomes MSGID (truncated to 32 printable characters). */
  msgidField: z.string().min(1).default('event.action'),
  /** Add `[<sdId> key="<event key>"]` so receivers can deduplicate. */
  structuredData: z.boolean().default(true),
  /** SD-ID: name@<private enterprise number>; 32473 is the documentation PEN (RFC 5612). */
  sdId: printable(32)
    .refine((s) => !/[=\]"]/.test(s), 'an SD-ID cannot contain = ] or "')
    .default('scimsync@32473'),
  /** Message body: the JSON document, or an ArcSight CEF line. */
  format: z.enum(['json', 'cef']).default('json'),
  cef: z
    .strictObject({
      vendor: z.string().min(1).default('analytics-platform'),
      product: z.string().min(1).default('audit-log'),
      version: z.string().min(1).default('1'),
      /** Field for Device Event Class ID (falls back to `audit`). */
      signatureIdField: z.string().min(1).default('event.action'),
      /** Field for Name (falls back to the signature id). */
      nameField: z.string().min(1).default('event.action'),
      severity: z.number().int().min(0).max(10).default(3),
      /** CEF extension key → document field. */
      extensions: z.record(z.string().regex(/^[A-Za-z0-9_]+$/, 'CEF keys are alphanumeric'), z.string().min(1)).default({
        act: 'event.action',
        suser: 'user.email',
        src: 'source.ip',
        outcome: 'event.outcome',
      }),
      /** Also carry the whole document as JSON in cs1 (label `auditEvent`). */
      includeDocument: z.boolean().default(true),
    })
    .prefault({}),
  connectTimeoutSeconds: z.number().positive().max(300).default(10),
  /** Max time for one attempt's messages to be confirmed by the receiver (closed in answer, or RELP-acknowledged). */
  timeoutSeconds: z.number().positive().max(600).default(30),
  /**
   * A receiver still unreachable (or not confirming) once `retry.maxAttempts` is spent:
   * `dead-letter` the request's unconfirmed events (code `syslog_unreachable`) and let the
   * export go on, or `fail` the run without moving the cursor (the next run sends them again).
   */
  whenDown: z.enum(['dead-letter', 'fail']).default('dead-letter'),
});
export type SyslogSinkConfig = z.infer<typeof syslogSinkSchema>;
