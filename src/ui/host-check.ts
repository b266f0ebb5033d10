/**
 * The Host header allowlist. A page on an attacker's site can make a browser resolve the
 * attacker's name to 127.0.0.1 (DNS rebinding) and then talk to this port as "its own"
 * origin; such requests still carry the attacker's host name, so answering only known host
 * names keeps them out, before login and before any data.
 */
const LOOPBACK = ['localhost', '127.0.0.1', '[::1]'];
const WILDCARD = new Set(['0.0.0.0', '::', '[::]']);

/** The host name of a Host header, lower-cased, without the port (`[::1]` keeps its brackets). */
export function hostName(header: string | undefined): string | undefined {
  if (header === undefined || header.length === 0 || header.length > 300) return undefined;
  const h = header.trim().toLowerCase();
  if (h.startsWith('[')) {
    const end = h.indexOf(']');
    return end > 0 ? h.slice(0, end + 1) : undefined;
  }
  const colon = h.indexOf(':');
  const name = colon >= 0 ? h.slice(0, colon) : h;
  return name.endsWith('.') ? name.slice(0, -1) : name;
}

export function hostAllowlist(bindHost: string, allowed: readonly string[]): (header: string | undefined) => boolean {
  const names = new Set(LOOPBACK);
  const bind = bindHost.includes(':') && !bindHost.startsWith('[') ? `[${bindHost}]` : bindHost;
  if (!WILDCARD.has(bindHost) && !WILDCARD.has(bind)) names.add(bind.toLowerCase());
  for (const a of allowed) {
    const n = hostName(a.includes(':') && !a.startsWith('[') && a.split(':').length > 2 ? `[${a}]` : a);
    if (n) names.add(n);
  }
  return (header) => {
    const n = hostName(header);
    return n !== undefined && names.has(n);
  };
}
