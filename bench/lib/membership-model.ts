/**
 * Which groups each user of a generated benchmark directory (bench/lib/ldap-directory.ts's
 * shape: groupMembers) is in, kept current as change drivers move users, so a driver knows
 * what a user's groups are without asking the directory.
 */
import { mulberry32 } from '../../src/simulator/prng.ts';
import { groupMembers } from './ldap-directory.ts';

/** Groups below this number hold a tenth of all users: moves and joiners use the others. */
export const LARGE_GROUPS = 5;

export class MembershipModel {
  private readonly users: number;
  private readonly groups: number;
  private readonly memberOf = new Map<number, Set<number>>();
  private inverse: Map<number, number[]> | undefined;
  private readonly rand = mulberry32(7);

  constructor(users: number, groups: number) {
    this.users = users;
    this.groups = groups;
  }

  /** The current groups of user i (a live set: drivers update it as they change the directory). */
  groupsOf(i: number): Set<number> {
    let set = this.memberOf.get(i);
    if (!set) {
      if (!this.inverse) {
        this.inverse = new Map();
        for (let g = 0; g < this.groups; g++)
          for (const u of groupMembers(g, this.users, this.groups)) {
            const list = this.inverse.get(u);
            if (list) list.push(g);
            else this.inverse.set(u, [g]);
          }
      }
      set = new Set(this.inverse.get(i) ?? []);
      this.memberOf.set(i, set);
    }
    return set;
  }

  /** A random group that is not one of the large ones and not in `not`. */
  otherGroup(not: ReadonlySet<number> = new Set()): number {
    for (;;) {
      const g = LARGE_GROUPS + Math.floor(this.rand() * (this.groups - LARGE_GROUPS));
      if (!not.has(g)) return g;
    }
  }

  /** The group a group move takes user i out of: a small one when it has one. */
  moveFrom(i: number): number | undefined {
    const groups = this.groupsOf(i);
    return [...groups].find((g) => g >= LARGE_GROUPS) ?? [...groups][0];
  }
}
