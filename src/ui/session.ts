/**
 * Login sessions of the status page, stateless: the cookie holds a random session id and its
 * expiry, signed with HMAC-SHA256 under a key derived from the read token. It is never the
 * token itself, so a leaked cookie expires and does not reveal the token; every replica with
 * the same token accepts it; changing the token ends every session.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const SESSION_COOKIE = 'scimsync_ui_session';
/** Longest cookie header parsed, bytes. */
const MAX_COOKIE_HEADER = 8 * 1024;

/** What a session lets its holder see: everything, or the redacted view. */
export type SessionRole = 'full' | 'redacted';

export interface SessionKeys {
  issue(role: SessionRole, nowMs: number, lifetimeMs: number): string;
  /** The role of a session this key signed that has not expired; undefined for anything else. */
  verify(value: string, nowMs: number): SessionRole | undefined;
}

/** `secrets`: the read tokens; changing any of them changes the key. */
export function sessionKeys(secrets: readonly string[]): SessionKeys {
  const key = createHmac('sha256', secrets.join('\0')).update('scim-audit-sync status page session v1').digest();
  const sign = (body: string): Buffer => createHmac('sha256', key).update(body).digest();
  return {
    issue(role, nowMs, lifetimeMs) {
      const body = `v1.${randomBytes(16).toString('hex')}.${Math.floor((nowMs + lifetimeMs) / 1000)}.${role === 'full' ? 'f' : 'r'}`;
      return `${body}.${sign(body).toString('base64url')}`;
    },
    verify(value, nowMs) {
      const m = /^(v1\.[0-9a-f]{32}\.(\d{1,12})\.([fr]))\.([A-Za-z0-9_-]{43})$/.exec(value);
      if (!m) return undefined;
      const given = Buffer.from(m[4]!, 'base64url');
      const want = sign(m[1]!);
      if (given.length !== want.length || !timingSafeEqual(given, want) || Number(m[2]) * 1000 <= nowMs) return undefined;
      return m[3] === 'f' ? 'full' : 'redacted';
    },
  };
}

/** The value of one cookie from a Cookie header, if present. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (header === undefined || header.length > MAX_COOKIE_HEADER) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** Set-Cookie for a session: not readable by scripts, never sent on cross-site requests, only to /ui. */
export function sessionCookie(value: string, maxAgeSeconds: number, secure: boolean): string {
  return `${SESSION_COOKIE}=${value}; Path=/ui; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
}

export function clearedSessionCookie(secure: boolean): string {
  return `${SESSION_COOKIE}=; Path=/ui; Max-Age=0; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
}
