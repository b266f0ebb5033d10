/**
 * Who is reading the status page. Three ways in, each optional:
 *   - a session cookie from the login form (the read token typed once; see session.ts);
 *   - `Authorization: Bearer <read token>` for scripts and probes;
 *   - the identity header of an authenticating reverse proxy (oauth2-proxy's
 *     `X-Forwarded-User` / `X-Auth-Request-User`), believed only when the TCP peer is one of
 *     daemon.ui.trustedProxy.addresses — anyone else can send that header too.
 * Without any of them a request is anonymous and sees the login page only.
 * Each way decides the role: the read token `full`, the redacted read token `redacted`, a proxy
 * user `full` unless fullAccessUsers/fullAccessGroups are set and name neither them nor a group
 * of theirs; daemon.ui.redact makes every role `redacted`.
 */
import type { IncomingMessage } from 'node:http';
import { BlockList, isIP } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { tokenMatcher } from './actions.ts';
import { SESSION_COOKIE, type SessionRole, clearedSessionCookie, cookieValue, sessionCookie, sessionKeys } from './session.ts';

/** `full`: everything the page shows; `redacted`: counts and reasons, no names, ids or values. */
export type Role = SessionRole;

export interface Viewer {
  /** The proxy's user name, or `token` for the read token. Never shown to other viewers. */
  name: string;
  via: 'session' | 'bearer' | 'proxy';
  role: Role;
}

export interface UiAuthOptions {
  /** The read token (daemon.ui.readTokenFile). */
  readToken?: string;
  /** The read token of the redacted view (daemon.ui.redactedReadTokenFile). */
  redactedReadToken?: string;
  /** daemon.ui.trustedProxy. */
  trustedProxy?: {
    addresses: readonly string[];
    fullAccessUsers?: readonly string[] | undefined;
    fullAccessGroups?: readonly string[] | undefined;
  };
  redact: boolean;
  sessionMinutes: number;
  secureCookie: boolean;
  now?: () => number;
}

export interface Identified {
  viewer?: Viewer;
  /** A bearer token was sent and is wrong (counts as a failed credential). */
  badBearer: boolean;
}

export interface UiAuth {
  /** Sign-in ways configured: the login form (token) and/or the proxy. */
  readonly methods: { token: boolean; proxy: boolean };
  identify(req: IncomingMessage): Identified;
  /** The role a read token grants; undefined when it is neither read token. */
  tokenRole(candidate: string): Role | undefined;
  /** Set-Cookie of a new session. */
  newSession(req: IncomingMessage, role: Role): string;
  /** Set-Cookie that removes the session. */
  endSession(req: IncomingMessage): string;
  /** The TCP peer, for rate limiting. */
  peer(req: IncomingMessage): string;
}

const PROXY_USER_HEADERS = ['x-forwarded-user', 'x-auth-request-user'] as const;
const PROXY_GROUP_HEADERS = ['x-forwarded-groups', 'x-auth-request-groups'] as const;
const MAX_USER_LENGTH = 256;
const MAX_GROUPS_LENGTH = 8 * 1024;

/** `::ffff:10.0.0.7` (a v4 peer on a dual-stack socket) as `10.0.0.7`. */
const plainAddress = (a: string): string => (a.startsWith('::ffff:') && isIP(a.slice(7)) === 4 ? a.slice(7) : a);

function blockList(entries: readonly string[]): BlockList {
  const list = new BlockList();
  for (const e of entries) {
    const [ip, bits] = e.split('/') as [string, string | undefined];
    const type = isIP(ip) === 6 ? 'ipv6' : 'ipv4';
    if (bits === undefined) list.addAddress(ip, type);
    else list.addSubnet(ip, Number(bits), type);
  }
  return list;
}

export function uiAuth(opts: UiAuthOptions): UiAuth {
  const now = opts.now ?? Date.now;
  const tokens = [opts.readToken, opts.redactedReadToken].filter((t): t is string => t !== undefined);
  const full = opts.readToken === undefined ? () => false : tokenMatcher(opts.readToken);
  const redacted = opts.redactedReadToken === undefined ? () => false : tokenMatcher(opts.redactedReadToken);
  const keys = tokens.length === 0 ? undefined : sessionKeys(tokens);
  const proxy = opts.trustedProxy;
  const proxies = proxy && proxy.addresses.length > 0 ? blockList(proxy.addresses) : undefined;
  const lifetimeMs = opts.sessionMinutes * 60_000;
  const roleOf = (r: Role): Role => (opts.redact ? 'redacted' : r);

  // Both matchers run every time: which token matched does not show in the timing.
  const tokenRole = (candidate: string): Role | undefined => {
    const f = full(candidate);
    const r = redacted(candidate);
    return f ? roleOf('full') : r ? roleOf('redacted') : undefined;
  };
  const peer = (req: IncomingMessage): string => plainAddress(req.socket.remoteAddress ?? '');
  const fromProxy = (req: IncomingMessage): boolean => {
    if (!proxies) return false;
    const p = peer(req);
    const type = isIP(p);
    return type !== 0 && proxies.check(p, type === 6 ? 'ipv6' : 'ipv4');
  };
  const proxyUser = (req: IncomingMessage): string | undefined => {
    if (!fromProxy(req)) return undefined;
    for (const h of PROXY_USER_HEADERS) {
      const v = req.headers[h];
      // Printable ASCII only: the name ends up in log lines.
      if (typeof v === 'string' && v.length > 0 && v.length <= MAX_USER_LENGTH && /^[\x21-\x7e]+$/.test(v)) return v;
    }
    return undefined;
  };
  const proxyGroups = (req: IncomingMessage): string[] => {
    for (const h of PROXY_GROUP_HEADERS) {
      const v = req.headers[h];
      if (typeof v === 'string' && v.length <= MAX_GROUPS_LENGTH) return v.split(',').map((g) => g.trim());
    }
    return [];
  };
  const proxyRole = (user: string, req: IncomingMessage): Role => {
    if (proxy?.fullAccessUsers === undefined && proxy?.fullAccessGroups === undefined) return roleOf('full');
    if (proxy.fullAccessUsers?.includes(user)) return roleOf('full');
    const groups = proxyGroups(req);
    return roleOf(proxy.fullAccessGroups?.some((g) => groups.includes(g)) ? 'full' : 'redacted');
  };
  const secure = (req: IncomingMessage): boolean =>
    opts.secureCookie || (req.socket as TLSSocket).encrypted === true || (fromProxy(req) && req.headers['x-forwarded-proto'] === 'https');

  return {
    methods: { token: keys !== undefined, proxy: proxies !== undefined },
    identify(req) {
      const user = proxyUser(req);
      if (user !== undefined) return { viewer: { name: user, via: 'proxy', role: proxyRole(user, req) }, badBearer: false };
      const auth = req.headers.authorization;
      if (auth !== undefined && /^bearer /i.test(auth)) {
        const role = tokenRole(auth.slice(7).trim());
        return role ? { viewer: { name: 'token', via: 'bearer', role }, badBearer: false } : { badBearer: true };
      }
      const session = cookieValue(req.headers.cookie, SESSION_COOKIE);
      const role = session === undefined ? undefined : keys?.verify(session, now());
      if (role !== undefined) return { viewer: { name: 'token', via: 'session', role: roleOf(role) }, badBearer: false };
      return { badBearer: false };
    },
    tokenRole,
    newSession(req, role) {
      if (!keys) throw new Error('no read token configured');
      return sessionCookie(keys.issue(role, now(), lifetimeMs), Math.floor(lifetimeMs / 1000), secure(req));
    },
    endSession: (req) => clearedSessionCookie(secure(req)),
    peer,
  };
}
