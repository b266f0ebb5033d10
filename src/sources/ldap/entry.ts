/**
 * Case-insensitive access to a search entry. Servers answer with their own spelling of an
 * attribute name (`objectGUID` vs `objectguid`), and ldapts keys entries by that spelling.
 */
import type { Entry } from 'ldapts';

type RawValue = Entry[string];

export class EntryView {
  readonly dn: string;
  readonly raw: Readonly<Record<string, unknown>>;
  private readonly entry: Entry;

  constructor(entry: Entry) {
    this.dn = entry.dn;
    this.raw = entry;
    this.entry = entry;
  }

  /** The server usually spells a name as asked; otherwise one case-insensitive scan of the entry's keys. */
  private get(attr: string): RawValue | undefined {
    const e = this.entry;
    if (attr !== 'dn' && Object.hasOwn(e, attr)) return e[attr];
    const want = attr.toLowerCase();
    if (want === 'dn') return undefined;
    for (const k of Object.keys(e)) if (k.toLowerCase() === want) return e[k];
    return undefined;
  }

  has(attr: string): boolean {
    const v = this.get(attr);
    return v !== undefined && (!Array.isArray(v) || v.length > 0);
  }

  /** All values as strings (binary values decoded as UTF-8). */
  strings(attr: string): string[] {
    const v = this.get(attr);
    if (v === undefined) return [];
    const list = Array.isArray(v) ? v : [v];
    return list.map((x) => (typeof x === 'string' ? x : x.toString('utf8')));
  }

  /** First non-empty value, trimmed. */
  first(attr: string): string | undefined {
    const v = this.get(attr);
    if (v === undefined) return undefined;
    if (!Array.isArray(v)) return nonEmpty(v); // the usual single value, without an array
    for (const x of v) {
      const t = nonEmpty(x);
      if (t !== undefined) return t;
    }
    return undefined;
  }

  /** All values as raw bytes (attributes requested as binary). */
  buffers(attr: string): Buffer[] {
    const v = this.get(attr);
    if (v === undefined) return [];
    const list = Array.isArray(v) ? v : [v];
    return list.map((x) => (typeof x === 'string' ? Buffer.from(x, 'utf8') : x));
  }
}

function nonEmpty(x: string | Buffer): string | undefined {
  const t = (typeof x === 'string' ? x : x.toString('utf8')).trim();
  return t === '' ? undefined : t;
}
