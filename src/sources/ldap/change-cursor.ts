/**
 * The LDAP change cursor: opaque JSON text the caller keeps between polls. It names the
 * mechanism, the scope it was taken for (a config change invalidates it) and where the
 * directory was: a server time with the entries already delivered at that time
 * (`modify-timestamp`), or a USN with the domain controller it belongs to (`usn`: a USN is
 * only meaningful on the DC that issued it).
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { LdapSettings } from './settings.ts';

const timestampCursor = z.strictObject({
  v: z.literal(1),
  mechanism: z.literal('modify-timestamp'),
  scope: z.string(),
  /** Server time (generalized time, UTC) of the latest change seen. */
  t: z.string().regex(/^\d{14}Z$/),
  /**
   * Entries delivered within the overlap window, dnKey → change stamp (entryCSN, else the
   * timestamp): the next poll skips them unless they changed again.
   */
  seen: z.record(z.string(), z.string()),
});

const usnCursor = z.strictObject({
  v: z.literal(1),
  mechanism: z.literal('usn'),
  scope: z.string(),
  /** highestCommittedUSN of the DC when the last poll began. */
  usn: z.number().int().nonnegative(),
  /** The DC's invocationId (else its dsServiceName): another DC, or a restored one, has other USNs. */
  dc: z.string(),
});

const cursorSchema = z.discriminatedUnion('mechanism', [timestampCursor, usnCursor]);

export type TimestampCursor = z.infer<typeof timestampCursor>;
export type UsnCursor = z.infer<typeof usnCursor>;
export type LdapCursor = z.infer<typeof cursorSchema>;

/** What the cursor was taken for: server, bases, filters, mapping of ids. */
export function cursorScope(s: LdapSettings): string {
  const parts = [
    s.url.toLowerCase(),
    s.users.baseDns.join(';'),
    s.users.filter,
    s.users.scope,
    s.userMap.externalId,
    s.groups ? [s.groups.baseDns.join(';'), s.groups.filter, s.groups.scope, s.groups.map.externalId].join('|') : '',
    s.memberAttribute,
    String(s.flattenNested),
    (s.changes.baseDns ?? []).join(';'),
  ];
  return createHash('sha256').update(parts.join('\n')).digest('base64url').slice(0, 16);
}

export function encodeCursor(c: LdapCursor): string {
  return JSON.stringify(c);
}

/** The cursor, or why it cannot be used (the caller answers with a full read). */
export function decodeCursor(text: string): { ok: true; cursor: LdapCursor } | { ok: false; why: string } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { ok: false, why: 'the cursor is not an LDAP change cursor' };
  }
  const r = cursorSchema.safeParse(json);
  return r.success ? { ok: true, cursor: r.data } : { ok: false, why: 'the cursor is not an LDAP change cursor of this version' };
}

/**
 * RFC 4517 generalized time (`20261128061500Z`, `20261128061500.0Z`, `202611280615+0100`) →
 * epoch ms; undefined when unreadable.
 */
export function parseGeneralizedTime(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const m = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})?(\d{2})?(?:[.,](\d+))?(Z|[+-]\d{4})$/.exec(text.trim());
  if (!m) return undefined;
  const [, y, mo, d, h, mi = '00', sec = '00', frac, zone] = m;
  const ms = frac === undefined ? 0 : Math.floor(Number(`0.${frac}`) * 1000);
  let t = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(sec), ms);
  if (zone !== 'Z') {
    const sign = (zone as string).startsWith('-') ? -1 : 1;
    const off = Number((zone as string).slice(1, 3)) * 60 + Number((zone as string).slice(3, 5));
    t -= sign * off * 60_000;
  }
  return Number.isFinite(t) ? t : undefined;
}

/** Epoch ms → generalized time in whole seconds, UTC (`20261128061500Z`). */
export function formatGeneralizedTime(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000)
    .toISOString()
    .replace(/[-:T]/g, '')
    .replace(/\.\d{3}Z$/, 'Z');
}
