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

/** RFC 5424 over TCP or TLS with octet-counting framing (RFC 6587 / RFC 5425). */
export const syslogSinkSchema = z.strictObject({
  type: z.literal('syslog'),
  // Receivers commonly cap a frame near 64 KiB; a request here is a socket write of many frames.
  ...sinkBase({ maxEvents: 500, maxBytes: 1024 * 1024 }),
  protocol: z.enum(['tcp', 'tls']).default('tls'),
  host: z.string().min(1),
  /** Default 6514 for tls (RFC 5425), 601 for tcp (RFC 6587). */
  port: z.number().int().min(1).max(65_535).optional(),
  tls: tlsSchema,
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
  /** Max time for one batch write to be flushed to the socket. */
  timeoutSeconds: z.number().positive().max(600).default(30),
});
export type SyslogSinkConfig = z.infer<typeof syslogSinkSchema>;
