/**
 * One resource collection (Users or Groups): id map, creation-ordered array for paging and
 * value indexes for O(1) `eq` lookups. Resources are mutated in place so the ordered array
 * never holds stale copies; deletes only count as stale and the array is compacted lazily,
 * once, on the next listing (a 100k-user collection is not rescanned per delete or per page).
 */
import type { ScimResource } from '../platform/scim/types.ts';

export interface IndexSpec {
  attr: string;
  caseInsensitive: boolean;
  unique: boolean;
  /** Uniqueness compared case-exactly although lookups stay case-insensitive (the case-sensitive-username quirk). */
  uniqueCaseExact?: boolean;
}

/** One id, or a Set once a value is shared: most values are unique, and 100k Sets cost real memory. */
type Ids = string | Set<string>;

interface Index {
  spec: IndexSpec;
  map: Map<string, Ids>;
}

function* eachId(ids: Ids | undefined): IterableIterator<string> {
  if (ids === undefined) return;
  if (typeof ids === 'string') yield ids;
  else yield* ids;
}

export class ResourceCollection<T extends ScimResource> {
  private readonly byId = new Map<string, T>();
  private order: T[] = [];
  private stale = 0;
  /** Creation sequence, so filtered results keep collection order; front inserts go negative. */
  private readonly seq = new Map<string, number>();
  private nextSeq = 0;
  private frontSeq = 0;
  private readonly indexes = new Map<string, Index>();

  constructor(specs: IndexSpec[]) {
    for (const spec of specs) this.indexes.set(spec.attr.toLowerCase(), { spec, map: new Map() });
  }

  get size(): number {
    return this.byId.size;
  }

  get(id: string): T | undefined {
    return this.byId.get(id);
  }

  /** Live resources in collection order. Treat as read-only. */
  all(): readonly T[] {
    if (this.stale > 0) {
      this.order = this.order.filter((r) => this.byId.get(r.id) === r);
      this.stale = 0;
    }
    return this.order;
  }

  /** Resources whose indexed `attr` equals `value`; undefined when `attr` has no index. */
  lookup(attr: string, value: string): T[] | undefined {
    const index = this.indexes.get(attr.toLowerCase());
    if (!index) return undefined;
    const ids = index.map.get(index.spec.caseInsensitive ? value.toLowerCase() : value);
    const out: T[] = [];
    for (const id of eachId(ids)) {
      const r = this.byId.get(id);
      if (r) out.push(r);
    }
    return out;
  }

  hasIndex(attr: string): boolean {
    return this.indexes.has(attr.toLowerCase());
  }

  /** The unique attribute `candidate` would collide on (ignoring `exceptId`), if any. */
  uniqueConflict(candidate: Record<string, unknown>, exceptId?: string): string | undefined {
    for (const { spec, map } of this.indexes.values()) {
      if (!spec.unique) continue;
      const key = this.key(spec, candidate[spec.attr]);
      if (key === undefined) continue;
      for (const id of eachId(map.get(key))) {
        if (id === exceptId) continue;
        if (spec.uniqueCaseExact && this.byId.get(id)?.[spec.attr] !== candidate[spec.attr]) continue;
        return spec.attr;
      }
    }
    return undefined;
  }

  insert(r: T, atFront = false): void {
    this.byId.set(r.id, r);
    if (atFront) {
      this.all(); // compact first so the unshift lands on live data only
      this.order.unshift(r);
      this.seq.set(r.id, --this.frontSeq);
    } else {
      this.order.push(r);
      this.seq.set(r.id, this.nextSeq++);
    }
    this.addToIndexes(r);
  }

  remove(id: string): T | undefined {
    const r = this.byId.get(id);
    if (!r) return undefined;
    this.removeFromIndexes(r);
    this.byId.delete(id);
    this.seq.delete(id);
    this.stale++;
    return r;
  }

  /** Replace every attribute of `r` in place with those of `next` (indexes follow). */
  replaceContent(r: T, next: Record<string, unknown>): void {
    this.removeFromIndexes(r);
    const target = r as Record<string, unknown>;
    for (const k of Object.keys(target)) delete target[k];
    Object.assign(target, next);
    this.addToIndexes(r);
  }

  /** Sort a subset into collection order. */
  sortInOrder(list: T[]): T[] {
    return list.sort((a, b) => (this.seq.get(a.id) ?? 0) - (this.seq.get(b.id) ?? 0));
  }

  clear(): void {
    this.byId.clear();
    this.order = [];
    this.stale = 0;
    this.seq.clear();
    for (const index of this.indexes.values()) index.map.clear();
  }

  private key(spec: IndexSpec, value: unknown): string | undefined {
    if (typeof value !== 'string') return undefined;
    return spec.caseInsensitive ? value.toLowerCase() : value;
  }

  private addToIndexes(r: T): void {
    for (const { spec, map } of this.indexes.values()) {
      const key = this.key(spec, r[spec.attr]);
      if (key === undefined) continue;
      const ids = map.get(key);
      if (ids === undefined) map.set(key, r.id);
      else if (typeof ids === 'string') map.set(key, new Set([ids, r.id]));
      else ids.add(r.id);
    }
  }

  private removeFromIndexes(r: T): void {
    for (const { spec, map } of this.indexes.values()) {
      const key = this.key(spec, r[spec.attr]);
      if (key === undefined) continue;
      const ids = map.get(key);
      if (ids === r.id) map.delete(key);
      else if (typeof ids === 'object') {
        ids.delete(r.id);
        if (ids.size === 0) map.delete(key);
      }
    }
  }
}
