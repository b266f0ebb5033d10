/**
 * LDIF writing for test directories: base64 for values LDIF cannot carry as text
 * (non-ASCII, leading space/colon/<, binary), RFC 4514 escaping for DN values.
 */

export type LdifValue = string | Buffer;
export interface LdifEntry {
  dn: string;
  attrs: Record<string, LdifValue | LdifValue[] | undefined>;
}

const SAFE = /^[\x01-\x09\x0b-\x0c\x0e-\x1f\x21-\x39\x3b\x3d-\x7f][\x01-\x09\x0b-\x0c\x0e-\x7f]*$/;

function line(name: string, value: LdifValue): string {
  if (typeof value === 'string' && (value === '' || (SAFE.test(value) && !value.endsWith(' ')))) return `${name}: ${value}`;
  const b = typeof value === 'string' ? Buffer.from(value, 'utf8') : value;
  return `${name}:: ${b.toString('base64')}`;
}

export function toLdif(entries: Iterable<LdifEntry>): string {
  const out: string[] = [];
  for (const e of entries) {
    out.push(line('dn', e.dn));
    for (const [k, v] of Object.entries(e.attrs)) {
      if (v === undefined) continue;
      for (const x of Array.isArray(v) ? v : [v]) out.push(line(k, x));
    }
    out.push('');
  }
  return out.join('\n') + '\n';
}

/** RFC 4514 escaping of one RDN value. */
export function escapeDnValue(v: string): string {
  let s = v.replace(/[\\,+"<>;=]/g, (m) => `\\${m}`);
  if (s.startsWith('#') || s.startsWith(' ')) s = `\\${s}`;
  if (s.endsWith(' ')) s = `${s.slice(0, -1)}\\ `;
  return s;
}
