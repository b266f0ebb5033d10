/**
 * The ledger's user-attribute section: which definitions this tool created, and per managed
 * user the values last read from or written to the platform (with the time of the last read).
 * It lets a run skip reading a user's values until `userAttributeSync.rereadAfterHours` has
 * passed. Stored next to the ownership entries (file: `attributes` key; Redis: its own hashes),
 * so a ledger written before this section existed loads unchanged.
 */
import type { AttributeValue } from '../../platform/user-attributes.ts';

export interface LedgerDefinition {
  id: string;
  /** True when this tool created it: only then may it change its description. */
  created: boolean;
}

export interface AttributeState {
  /** Epoch ms of the last read of this user's values from the platform. */
  readAt: number;
  /** Configured attributes → value (null: known to be unset). An absent key is unknown. */
  values: Record<string, AttributeValue | null>;
}

export interface LedgerAttributesData {
  definitions: Record<string, LedgerDefinition>;
  values: Record<string, AttributeState>;
}

export class AttributeLedger {
  private readonly defs: Map<string, LedgerDefinition>;
  private readonly states: Map<string, AttributeState>;
  /** User ids whose state changed since takeChangedStates() (the daemon writes them through). */
  private readonly changed = new Set<string>();
  private readonly forgotten: string[] = [];
  private readonly changedDefs = new Map<string, LedgerDefinition>();
  dirty = false;

  constructor(data?: LedgerAttributesData) {
    this.defs = new Map(Object.entries(data?.definitions ?? {}));
    this.states = new Map(Object.entries(data?.values ?? {}));
  }

  definition(name: string): LedgerDefinition | undefined {
    return this.defs.get(name);
  }

  /** Names of definitions this tool created, by platform id. */
  createdIds(): Set<string> {
    return new Set([...this.defs.values()].filter((d) => d.created).map((d) => d.id));
  }

  recordDefinition(name: string, def: LedgerDefinition): void {
    const prev = this.defs.get(name);
    // Once created by us, always ours (a later adoption after a lost response keeps the flag).
    const next = { id: def.id, created: def.created || (prev?.id === def.id && prev.created) };
    this.defs.set(name, next);
    this.changedDefs.set(name, next);
    this.dirty = true;
  }

  /** Definitions recorded since the last call (the daemon writes them through). */
  takeChangedDefinitions(): Array<[string, LedgerDefinition]> {
    const out = [...this.changedDefs];
    this.changedDefs.clear();
    return out;
  }

  forgetDefinition(name: string): void {
    if (this.defs.delete(name)) {
      this.dirty = true;
      this.forgotten.push(name);
      this.changedDefs.delete(name);
    }
  }

  /** Definitions forgotten since the last call (the daemon deletes them from Redis). */
  takeForgottenDefinitions(): string[] {
    return this.forgotten.splice(0);
  }

  state(userId: string): AttributeState | undefined {
    return this.states.get(userId);
  }

  recordState(userId: string, state: AttributeState): void {
    this.states.set(userId, state);
    this.changed.add(userId);
    this.dirty = true;
  }

  forgetUser(userId: string): void {
    if (this.states.delete(userId)) this.dirty = true;
    this.changed.delete(userId);
  }

  takeChangedStates(): Array<[string, AttributeState]> {
    const out: Array<[string, AttributeState]> = [];
    for (const id of this.changed) {
      const s = this.states.get(id);
      if (s) out.push([id, s]);
    }
    this.changed.clear();
    return out;
  }

  get isEmpty(): boolean {
    return this.defs.size === 0 && this.states.size === 0;
  }

  toJSON(): LedgerAttributesData {
    return { definitions: Object.fromEntries(this.defs), values: Object.fromEntries(this.states) };
  }
}
