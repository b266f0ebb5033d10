/**
 * DN comparison keys. A `member` value and the DN of the entry it points at may be spelled
 * differently (case, spaces, `\,` vs `\2C`, attribute order in a multi-valued RDN), so
 * membership is resolved on a canonical key, never on the raw string.
 */

/** Split on an unescaped separator, keeping escapes intact for the next stage. */
function splitUnescaped(s: string, sep: string): string[] {
  const parts: string[] = [];
  let cur = '';
  let quoted = false;
  for (let i = 0; i < s.length; i++) {
    const c = s[i] as string;
    if (c === '\\' && i + 1 < s.length) {
      cur += c + (s[i + 1] as string);
      i++;
    } else if (c === '"') {
      quoted = !quoted; // RFC 2253 legacy quoting
      cur += c;
    } else if (!quoted && sep.includes(c)) {
      parts.push(cur);
      cur = '';
    } else {
      cur += c;
    }
  }
  parts.push(cur);
  return parts;
}

/** Decode `\XX` hex pairs (UTF-8 bytes) and `\c` escapes of an attribute value. */
export function unescapeDnValue(raw: string): string {
  let v = raw.trim();
  if (!v.includes('\\') && !v.startsWith('"')) return v; // the common case, on every member value
  if (v.startsWith('"') && v.endsWith('"') && v.length >= 2) v = v.slice(1, -1);
  const bytes: number[] = [];
  for (let i = 0; i < v.length; i++) {
    const c = v[i] as string;
    if (c === '\\' && i + 1 < v.length) {
      const hex = v.slice(i + 1, i + 3);
      if (/^[0-9a-fA-F]{2}$/.test(hex)) {
        bytes.push(parseInt(hex, 16));
        i += 2;
      } else {
        for (const b of Buffer.from(v[i + 1] as string, 'utf8')) bytes.push(b);
        i += 1;
      }
    } else {
      for (const b of Buffer.from(c, 'utf8')) bytes.push(b);
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

/**
 * Canonical comparison key: attribute types and values lower-cased (naming attributes are
 * case-insensitive in practice), insignificant spaces removed, escapes decoded, Unicode NFC,
 * multi-valued RDN parts sorted. Not a valid DN: only ever compared, never sent.
 */
export function dnKey(dn: string): string {
  // Most DNs a directory returns are plain ASCII without escapes: keyed without the general parser.
  if (CANONICAL_DN.test(dn)) return dn;
  if (!NEEDS_PARSER.test(dn)) return plainDnKey(dn);
  const cached = keyCache.get(dn);
  if (cached !== undefined) return cached;
  const key = computeDnKey(dn);
  // Escaped DNs repeat across groups; bounded so a huge directory cannot grow it without limit.
  if (keyCache.size >= 200_000) keyCache.clear();
  keyCache.set(dn, key);
  return key;
}

const keyCache = new Map<string, string>();

/** Already its own key: lower-case `type=value` pairs with no spaces, escapes or `=` in a value. */
const CANONICAL_DN = /^[a-z0-9._@-]+=[a-z0-9._@-]+(?:,[a-z0-9._@-]+=[a-z0-9._@-]+)*$/;
/** Escapes, quoting, multi-valued RDNs, `;` separators or non-ASCII: the general parser. */
const NEEDS_PARSER = /[^\x20-\x7e]|[\\"+;]/;

/** computeDnKey for a printable-ASCII DN without escapes, quotes, `+` or `;` (same result). */
function plainDnKey(dn: string): string {
  let out = '';
  for (const rdn of dn.split(',')) {
    if (rdn.trim() === '') continue;
    const eq = rdn.indexOf('=');
    let ava: string;
    if (eq < 0) ava = rdn.trim().toLowerCase();
    else {
      const value = rdn
        .slice(eq + 1)
        .trim()
        .toLowerCase()
        .replace(/\s+/g, ' ')
        .replace(/=/g, '\\=');
      ava = `${rdn.slice(0, eq).trim().toLowerCase()}=${value}`;
    }
    out = out === '' ? ava : `${out},${ava}`;
  }
  return out;
}

function computeDnKey(dn: string): string {
  const rdns = splitUnescaped(dn.trim(), ',;').filter((r) => r.trim() !== '');
  return rdns
    .map((rdn) =>
      splitUnescaped(rdn, '+')
        .map((ava) => {
          const eq = ava.indexOf('=');
          if (eq < 0) return ava.trim().toLowerCase();
          const type = ava.slice(0, eq).trim().toLowerCase();
          const value = unescapeDnValue(ava.slice(eq + 1))
            .normalize('NFC')
            .toLowerCase()
            .replace(/\s+/g, ' ');
          // Re-escape the separators so distinct DNs keep distinct keys.
          return `${type}=${value.replace(/[\\,+=]/g, (m) => `\\${m}`)}`;
        })
        .sort()
        .join('+'),
    )
    .join(',');
}

/** Strip the optional `#'0101'B` uid suffix of a `uniqueMember` (nameAndOptionalUID) value. */
export function stripOptionalUid(value: string): string {
  return value.replace(/#'[01]*'B$/, '');
}

/** Whether the entry keyed `key` (dnKey) lies within a `scope` search of the base keyed `base`. */
export function inSearchScope(key: string, base: string, scope: 'sub' | 'one'): boolean {
  if (key === base) return scope === 'sub';
  if (!key.endsWith(`,${base}`)) return false;
  const below = key.slice(0, key.length - base.length - 1);
  // `cn=a\,ou=people` names one entry whose value holds a comma: that comma separates nothing.
  if (/(^|[^\\])(\\\\)*\\$/.test(below)) return false;
  return scope === 'sub' || splitUnescaped(below, ',').length === 1;
}
