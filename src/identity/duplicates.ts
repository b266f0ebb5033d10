/**
 * Duplicate detection for every source: the FIRST entry with an externalId, or with a name
 * (userName of users, displayName of groups, compared by `nameKey`: NFC and full case
 * folding), is kept; every later one is rejected with a reason that names the kept entry.
 * The order of the source decides, never chance. One reason text for every source.
 *
 * `W` is whatever the source keeps to say where the kept entry is (a DN, a line, an index):
 * a source with 1,000,000 entries may keep a number and build the text only for a duplicate.
 */
import { nameKey } from './canonical-name.ts';
import { quote } from './text-rules.ts';

/** What a reason says of the kept entry. */
export interface KeptEntry {
  /** Where it is: a DN, `users[3] (externalId 1003)`, a file and line. */
  ref: string;
  /** Its name as the source spells it. */
  name: string;
}

export class DuplicateIndex<W> {
  private readonly byId = new Map<string, W>();
  private readonly byName = new Map<string, W>();

  /**
   * `nameField`: how the name is called in reasons (`userName`, `displayName`).
   * `describe`: the kept entry, called only to word a reason.
   */
  private readonly nameField: string;
  private readonly describe: (at: W) => KeptEntry;

  constructor(nameField: string, describe: (at: W) => KeptEntry) {
    this.nameField = nameField;
    this.describe = describe;
  }

  /** Why this entry is a duplicate of a kept one, or undefined. */
  reason(externalId: string, name: string): string | undefined {
    const first = this.byId.get(externalId);
    if (first !== undefined)
      return `duplicate externalId ${quote(externalId)}: already used by ${this.describe(first).ref}; the first entry is kept`;
    const at = this.byName.get(nameKey(name));
    if (at === undefined) return undefined;
    const kept = this.describe(at);
    const same = kept.name === name ? '' : ` (the same name as ${quote(kept.name)} after Unicode normalization and case folding)`;
    return `duplicate ${this.nameField} ${quote(name)}${same}: already used by ${kept.ref}; the first entry is kept`;
  }

  /** Records a kept entry. */
  add(externalId: string, name: string, at: W): void {
    this.byId.set(externalId, at);
    this.byName.set(nameKey(name), at);
  }

  /** Where the kept entry with this externalId is, if any. */
  idAt(externalId: string): W | undefined {
    return this.byId.get(externalId);
  }

  hasId(externalId: string): boolean {
    return this.byId.has(externalId);
  }
}
