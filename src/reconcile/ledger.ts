/**
 * Ownership: the engine only ever deactivates, deletes or rewrites memberships of platform
 * objects it manages. It manages an object when it created it or adopted it; that fact is
 * kept in the ledger (platform id → source externalId), persisted in the state store
 * (a file in one-shot mode, Redis in the daemon). Creates are recorded as *pending* before
 * they are sent, so a crash between the POST and the ledger write cannot orphan an object:
 * the next run adopts a platform object whose externalId is pending.
 */
import { AttributeLedger, type AttributeState, type LedgerAttributesData, type LedgerDefinition } from './attributes/ledger-section.ts';

export type ObjectKind = 'user' | 'group';

export interface LedgerEntry {
  externalId: string;
  /** Epoch ms when we deactivated it (for deleteAfterDays). */
  deactivatedAt?: number;
  /**
   * Groups: the member removals the server acknowledged in the last membership change of
   * this group. A removal planned again for one of them did not converge (reconcile.md).
   */
  removed?: { at: number; ids: string[] };
}

export interface LedgerData {
  version: 1;
  users: Record<string, LedgerEntry>;
  groups: Record<string, LedgerEntry>;
  /** `user:<externalId>` / `group:<externalId>` creates that were sent but not yet confirmed. */
  pending: string[];
  /** User attributes: definitions we created, last known values per user. Absent in older ledgers. */
  attributes?: LedgerAttributesData;
}

/** The write side of the ledger used while applying; the daemon's Redis ledger implements it too. */
export interface LedgerWriter {
  record(kind: ObjectKind, id: string, externalId: string): void | Promise<void>;
  forget(kind: ObjectKind, id: string): void | Promise<void>;
  setDeactivated(id: string, at: number | undefined): void | Promise<void>;
  has(kind: ObjectKind, id: string): boolean | Promise<boolean>;
  /** Platform id of a managed object by its source externalId (e.g. a user created earlier in this run). */
  idFor(kind: ObjectKind, externalId: string): string | undefined | Promise<string | undefined>;
  /** Member removals of a group the server acknowledged (replaces the previous record). Optional. */
  noteMemberRemovals?(groupId: string, ids: string[], at: number): void | Promise<void>;
  /** User attributes: definition created or adopted; a user's values after writing them. */
  recordAttributeDefinition?(name: string, def: LedgerDefinition): void | Promise<void>;
  attributeDefinition?(name: string): LedgerDefinition | undefined | Promise<LedgerDefinition | undefined>;
  recordAttributeState?(userId: string, state: AttributeState): void | Promise<void>;
  attributeState?(userId: string): AttributeState | undefined | Promise<AttributeState | undefined>;
}

export interface LedgerStore {
  readonly describe: string;
  load(): Promise<LedgerData | undefined>;
  save(data: LedgerData): Promise<void>;
}

export class Ledger implements LedgerWriter {
  private readonly users: Map<string, LedgerEntry>;
  private readonly groups: Map<string, LedgerEntry>;
  private readonly pending: Set<string>;
  private dirty = false;
  /** Ids dropped by prune() since the last takePruned(), for stores written entry by entry. */
  private readonly pruned: Record<ObjectKind, string[]> = { user: [], group: [] };
  /** Lazily built externalId → id indexes, dropped on every write. */
  private readonly byExternalId = new Map<ObjectKind, Map<string, string>>();
  /** User-attribute section (definitions we created, last known values). */
  readonly attributes: AttributeLedger;

  /** `intern`: keep each id as the one string the platform snapshot holds (platform/scim/compact.ts). */
  constructor(data?: LedgerData, intern: (s: string) => string = (s) => s) {
    this.users = new Map(Object.entries(data?.users ?? {}).map(([id, e]) => [intern(id), e]));
    this.groups = new Map(Object.entries(data?.groups ?? {}).map(([id, e]) => [intern(id), e]));
    this.pending = new Set(data?.pending ?? []);
    this.attributes = new AttributeLedger(data?.attributes);
  }

  recordAttributeDefinition(name: string, def: LedgerDefinition): void {
    this.attributes.recordDefinition(name, def);
  }

  attributeDefinition(name: string): LedgerDefinition | undefined {
    return this.attributes.definition(name);
  }

  recordAttributeState(userId: string, state: AttributeState): void {
    this.attributes.recordState(userId, state);
  }

  attributeState(userId: string): AttributeState | undefined {
    return this.attributes.state(userId);
  }

  static async load(store: LedgerStore, intern?: (s: string) => string): Promise<Ledger> {
    return new Ledger(await store.load(), intern);
  }

  private map(kind: ObjectKind): Map<string, LedgerEntry> {
    return kind === 'user' ? this.users : this.groups;
  }

  has(kind: ObjectKind, id: string): boolean {
    return this.map(kind).has(id);
  }

  idFor(kind: ObjectKind, externalId: string): string | undefined {
    let index = this.byExternalId.get(kind);
    if (!index) {
      index = new Map([...this.map(kind)].map(([id, e]) => [e.externalId, id]));
      this.byExternalId.set(kind, index);
    }
    return index.get(externalId);
  }

  get(kind: ObjectKind, id: string): LedgerEntry | undefined {
    return this.map(kind).get(id);
  }

  count(kind: ObjectKind): number {
    return this.map(kind).size;
  }

  isPending(kind: ObjectKind, externalId: string): boolean {
    return this.pending.has(`${kind}:${externalId}`);
  }

  markPending(kind: ObjectKind, externalId: string): void {
    this.pending.add(`${kind}:${externalId}`);
    this.dirty = true;
  }

  record(kind: ObjectKind, id: string, externalId: string): void {
    const prev = this.map(kind).get(id);
    this.map(kind).set(id, { ...prev, externalId });
    this.pending.delete(`${kind}:${externalId}`);
    this.byExternalId.get(kind)?.set(externalId, id);
    this.dirty = true;
  }

  setDeactivated(id: string, at: number | undefined): void {
    const prev = this.users.get(id);
    if (!prev) return;
    const next: LedgerEntry = { externalId: prev.externalId };
    if (at !== undefined) next.deactivatedAt = at;
    this.users.set(id, next);
    this.dirty = true;
  }

  noteMemberRemovals(groupId: string, ids: string[], at: number): void {
    const prev = this.groups.get(groupId);
    if (!prev || (ids.length === 0 && prev.removed === undefined)) return;
    const { removed: _, ...rest } = prev;
    this.groups.set(groupId, ids.length > 0 ? { ...rest, removed: { at, ids } } : rest);
    this.dirty = true;
  }

  /** Managed ids of a kind. */
  ids(kind: ObjectKind): string[] {
    return [...this.map(kind).keys()];
  }

  forget(kind: ObjectKind, id: string): void {
    if (kind === 'user') this.attributes.forgetUser(id);
    if (this.map(kind).delete(id)) {
      this.byExternalId.delete(kind);
      this.dirty = true;
    }
  }

  /** Drop entries whose platform object no longer exists (deleted by someone else). */
  prune(kind: ObjectKind, existingIds: Set<string>): number {
    let n = 0;
    for (const id of this.map(kind).keys()) {
      if (!existingIds.has(id)) {
        this.map(kind).delete(id);
        if (kind === 'user') this.attributes.forgetUser(id);
        this.byExternalId.delete(kind);
        this.pruned[kind].push(id);
        n++;
      }
    }
    if (n > 0) this.dirty = true;
    return n;
  }

  takePruned(): Record<ObjectKind, string[]> {
    const out = { user: [...this.pruned.user], group: [...this.pruned.group] };
    this.pruned.user.length = 0;
    this.pruned.group.length = 0;
    return out;
  }

  get isDirty(): boolean {
    return this.dirty || this.attributes.dirty;
  }

  toJSON(): LedgerData {
    return {
      version: 1,
      users: Object.fromEntries(this.users),
      groups: Object.fromEntries(this.groups),
      pending: [...this.pending],
      ...(this.attributes.isEmpty ? {} : { attributes: this.attributes.toJSON() }),
    };
  }

  async save(store: LedgerStore): Promise<void> {
    await store.save(this.toJSON());
    this.dirty = false;
    this.attributes.dirty = false;
  }
}
