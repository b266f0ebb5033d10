/** LDAP filter text (RFC 4515) built from configured filters and values. */

/** A configured filter in parentheses, as `(&…)` composition needs (`uid=a*` → `(uid=a*)`). */
export function wrap(filter: string): string {
  const f = filter.trim();
  return f.startsWith('(') ? f : `(${f})`;
}

/** A value escaped for an equality assertion: `\`, `*`, `(`, `)` and NUL as `\xx`. */
export function escapeFilterValue(v: string): string {
  return v.replace(/[\\*()\0]/g, (c) => `\\${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}
