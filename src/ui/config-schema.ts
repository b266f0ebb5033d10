/**
 * `daemon.ui`: the status page, on its own port (so a NetworkPolicy can admit Prometheus to the
 * metrics port without admitting it to the page). Reading it needs a read token or a trusted
 * proxy's identity header; actions need the action token as well (docs/daemon.md).
 */
import { isIP } from 'node:net';
import { z } from 'zod';
import { secretFile } from '../config/file-refs.ts';

/** `10.0.0.7`, `::1`, or a CIDR block such as `10.0.0.0/8`. */
const addressOrCidr = z.string().refine(
  (s) => {
    const [ip, bits, extra] = s.split('/');
    if (extra !== undefined || ip === undefined || isIP(ip) === 0) return false;
    if (bits === undefined) return true;
    const n = Number(bits);
    return /^\d{1,3}$/.test(bits) && n <= (isIP(ip) === 4 ? 32 : 128);
  },
  { message: 'must be an IP address or a CIDR block, e.g. 127.0.0.1 or 10.0.0.0/8' },
);

export const uiSchema = z
  .strictObject({
    /** Serve the status page. */
    enabled: z.boolean().default(true),
    /** Bind address of the page's own server; loopback unless set (the chart sets 0.0.0.0 or keeps loopback behind its proxy sidecar). */
    host: z.string().min(1).default('127.0.0.1'),
    /** Port of the page's own server, apart from daemon.http (metrics, probes); 0 picks a free port (tests). */
    port: z.number().int().min(0).max(65535).default(9465),
    /** File holding the read token (at least 16 characters): the login form and `Authorization: Bearer` check it. */
    readTokenFile: secretFile().optional(),
    /** File holding a second read token whose readers get the redacted view (a read-only audience such as auditors). */
    redactedReadTokenFile: secretFile().optional(),
    /** A reverse proxy that authenticates users (oauth2-proxy) and names them in X-Forwarded-User / X-Auth-Request-User. */
    trustedProxy: z
      .strictObject({
        /** Peer addresses or CIDR blocks the identity headers are accepted from; from any other peer they are ignored. */
        addresses: z.array(addressOrCidr).min(1),
        /** When set (with fullAccessGroups or alone), proxy users not named here see the redacted view. */
        fullAccessUsers: z.array(z.string().min(1)).optional(),
        /** When set, proxy users in none of these groups (X-Forwarded-Groups) see the redacted view. */
        fullAccessGroups: z.array(z.string().min(1)).optional(),
      })
      .optional(),
    /** Host header values (host names, without port) the page answers besides localhost, 127.0.0.1, [::1] and its bind address. */
    allowedHosts: z.array(z.string().min(1).max(253)).default([]),
    /** Mask personal data (names, ids, attribute values, who is held) for everyone: counts and reasons only. */
    redact: z.boolean().default(false),
    /** Lifetime of a login session, minutes. */
    sessionMinutes: z
      .number()
      .int()
      .min(5)
      .max(7 * 24 * 60)
      .default(480),
    /** Always mark the session cookie Secure (https reached through a proxy that does not send X-Forwarded-Proto). */
    secureCookie: z.boolean().default(false),
    /** File holding the token that actions on the page (approve held deletions, resume, trigger) require; at least 16 characters. */
    actionTokenFile: secretFile().optional(),
    /**
     * Link from a run to its trace (tracing on, docs/daemon.md#traces): the trace viewer's URL
     * with `{traceId}` where the run's trace id goes. Unset: the trace id is shown as text.
     */
    traceUrl: z
      .string()
      .refine((s) => /^https?:\/\/[^\s]+$/.test(s) && s.includes('{traceId}'), {
        message: 'must be an http(s) URL containing {traceId}, e.g. https://grafana.example.com/explore?traceId={traceId}',
      })
      .optional(),
    /** Provisioning-log records shown per tenant (newest first). */
    logRecords: z.number().int().min(1).max(1000).default(50),
  })
  .prefault({});

export type UiConfig = z.infer<typeof uiSchema>;
