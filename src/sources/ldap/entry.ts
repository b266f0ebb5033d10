/**
 * Case-insensitive access to a search entry. Servers answer with their own spelling of an
 * attribute name (`objectGUID` vs `objectguid`), and ldapts keys entries by that spelling.
 */
import type { Entry } from 'ldapts';

type RawValue = Entry[string];

export class EntryView {
  readonly dn: string;
  private readonly byLower = new Map<string, RawValue>();
  readonly raw: Readonly<Record<string, unknown>>;

  constructor(entry: Entry) {
    this.dn = entry.dn;
    this.raw = entry;
    for (const [k, v] of Object.entries(entry)) if (k !== 'dn') this.byLower.set(k.toLowerCase(), v);
  }

  has(attr: string): boolean {
    const v = this.byLower.get(attr.toLowerCase());
    return v !== undefined && (!Array.isArray(v) || v.length > 0);
  }

  /** All values as strings (binary values decoded as UTF-8). */
  strings(attr: string): string[] {
    const v = this.byLower.get(attr.toLowerCase());
    if (v === undefined) return [];
    const list = Array.isArray(v) ? v : [v];
    return list.map((x) => (typeof x === 'string' ? x : x.toString('utf8')));
  }

  /** First non-empty value, trimmed. */
  first(attr: string): string | undefined {
    for (const s of this.strings(attr)) {
      const t = s.trim();
      if (t !== '') return t;
    }
    return undefined;
  }

  /** All values as raw bytes (attributes requested as binary). */
  buffers(attr: string): Buffer[] {
    const v = this.byLower.get(attr.toLowerCase());
    if (v === undefined) return [];
    const list = Array.isArray(v) ? v : [v];
    return list.map((x) => (typeof x === 'string' ? Buffer.from(x, 'utf8') : x));
  }
}
