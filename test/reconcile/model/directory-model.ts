/**
 * The model of the model-based property test: the source directory as a list of people and
 * groups in file order, with the two kinds of bad entry a person can make (an invalid e-mail,
 * a userName that an earlier entry already uses). Which entries the file source keeps is
 * computed here by the same rule the docs state (the first entry with a userName wins), so
 * the invariants can tell "present but invalid" from "gone".
 */
import { nameKey } from '../../../src/identity/canonical-name.ts';
import type { Directory, DirUser } from '../../helpers/reconcile-harness.ts';

export interface Person {
  ext: string;
  userName: string;
  /** The userName before a duplicate-name typo, restored when the typo is fixed. */
  typoOf?: string;
  given: string;
  family: string;
  active: boolean;
  badEmail: boolean;
}

export interface GroupModel {
  ext: string;
  displayName: string;
  members: string[];
  /** The entry is broken (blank displayName): the file source rejects it. */
  broken: boolean;
}

export class DirectoryModel {
  persons: Person[] = [];
  groups: GroupModel[] = [];
  /** People who left, newest last: a returner comes back with the same externalId. */
  leavers: Person[] = [];
  private next = 1;

  newExt(prefix = 'e'): string {
    return `${prefix}-${this.next++}`;
  }

  /** Lower-cased userNames of the entries the file source keeps, with their owner. */
  keptNames(): Map<string, Person> {
    const kept = new Map<string, Person>();
    for (const p of this.persons) {
      if (p.badEmail) continue;
      const key = nameKey(p.userName);
      if (!kept.has(key)) kept.set(key, p);
    }
    return kept;
  }

  isValid(p: Person): boolean {
    return !p.badEmail && this.keptNames().get(nameKey(p.userName)) === p;
  }

  valid(): Person[] {
    const kept = new Set(this.keptNames().values());
    return this.persons.filter((p) => kept.has(p));
  }

  invalid(): Person[] {
    const kept = new Set(this.keptNames().values());
    return this.persons.filter((p) => !kept.has(p));
  }

  present(ext: string): boolean {
    return this.persons.some((p) => p.ext === ext);
  }

  person(ext: string): Person | undefined {
    return this.persons.find((p) => p.ext === ext);
  }

  /** userNames any source entry uses (valid or not), lower-cased. */
  usedNames(): Set<string> {
    return new Set(this.persons.map((p) => nameKey(p.userName)));
  }

  leave(p: Person): void {
    this.persons = this.persons.filter((q) => q !== p);
    for (const g of this.groups) g.members = g.members.filter((m) => m !== p.ext);
    this.leavers.push(p);
  }

  toDirectory(opts: { outage?: boolean } = {}): Directory {
    const users: DirUser[] = opts.outage
      ? []
      : this.persons.map((p) => ({
          externalId: p.ext,
          userName: p.userName,
          givenName: p.given,
          familyName: p.family,
          emails: p.badEmail ? 'not-an-e-mail' : `${p.ext}@mail.example.com`,
          active: p.active,
        }));
    const groups = opts.outage
      ? []
      : this.groups.map((g) => ({ externalId: g.ext, displayName: g.broken ? '   ' : g.displayName, members: [...g.members] }));
    return { users, groups };
  }

  describe(): string {
    const ps = this.persons.map((p) => `${p.ext}:${p.userName}${p.active ? '' : '(off)'}${this.isValid(p) ? '' : '(invalid)'}`).join(' ');
    const gs = this.groups.map((g) => `${g.ext}:${g.displayName}${g.broken ? '(broken)' : ''}[${g.members.join(',')}]`).join(' ');
    return `persons ${ps} | groups ${gs}`;
  }
}

/**
 * A small pool of names, so joiners, renames and admin-created accounts collide often; two of
 * them are non-ASCII (`josé`, `straße`), so NFC/NFD and full case-folding variants
 * (`nameVariant`) are one name to the sync.
 */
export const NAME_POOL = ['ann', 'josé', 'cat', 'straße', 'bob', 'dan', 'eve', 'fay', 'gus', 'hal', 'ivy', 'jon', 'kim', 'lea'].map(
  (n) => `${n}@example.com`,
);
export const GROUP_NAMES = ['Engineering', 'Sales', 'Finance', 'Support', 'Legal', 'Ops'];

/**
 * Another spelling of the same name under `nameKey`: the decomposed form (NFD), the composed
 * form (NFC), or the upper case (full case folding: `straße` and `STRASSE` are one name).
 */
export function nameVariant(userName: string, k: number): string {
  const forms = [userName.normalize('NFD'), userName.normalize('NFC'), userName.toUpperCase()].filter((v) => v !== userName);
  return forms[k % Math.max(1, forms.length)] ?? userName;
}
