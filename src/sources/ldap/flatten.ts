/**
 * Group membership resolution: member values → user externalIds, nested groups flattened
 * (each group gets the users of every group reachable from it, so a cycle simply stops the
 * walk), and every member that is neither an in-scope user nor a known group counted.
 */
import type { NormalizedGroup } from '../../identity/model.ts';
import { dnKey, stripOptionalUid } from './dn.ts';
import type { RawGroup } from './map.ts';
import type { MemberAttribute } from './presets.ts';

export interface MembershipInput {
  groups: RawGroup[];
  /** dnKey(user DN) → user externalId, for accepted users only. */
  userByDn: ReadonlyMap<string, string>;
  /** lower-cased memberUid value → user externalId (memberUid mode). */
  userByUid: ReadonlyMap<string, string>;
  /** dnKeys of users that were read but rejected (so their absence is explained, not "outside scope"). */
  rejectedUserDns: ReadonlySet<string>;
  memberAttribute: MemberAttribute;
  flattenNested: boolean;
}

export interface MembershipStats {
  /** Member values naming nothing we read: users outside the user scope or unknown DNs. Skipped. */
  membersOutsideScope: number;
  /** Member values naming a user that was rejected. */
  membersRejected: number;
  /** Nested group references skipped because flattening is off. */
  nestedGroupsIgnored: number;
  /** Groups that (indirectly) contain themselves; the cycle is cut. */
  groupsInCycles: number;
}

export interface MembershipResult {
  groups: NormalizedGroup[];
  stats: MembershipStats;
  /** Group externalId → the externalIds of the groups nested directly in it (only groups that have some, and only when flattening). */
  nested: Map<string, string[]>;
}

/**
 * Resolves groups as they are read: a member value naming an accepted user becomes its
 * externalId at once, so a group keeps ids (shared with the users) rather than member DNs;
 * only values naming something else (a nested group, perhaps not read yet; a rejected or
 * out-of-scope entry) are kept, as DN keys, until `finish()`.
 */
export class MembershipResolver {
  private readonly input: Omit<MembershipInput, 'groups'>;
  private readonly groups: RawGroup[] = [];
  private readonly direct: Set<string>[] = [];
  private readonly unresolved: string[][] = [];
  private readonly stats: MembershipStats = { membersOutsideScope: 0, membersRejected: 0, nestedGroupsIgnored: 0, groupsInCycles: 0 };

  constructor(input: Omit<MembershipInput, 'groups'>) {
    this.input = input;
  }

  /** Adds a group with its member values; returns its slot for `addMembers`. Its `memberValues` are not kept. */
  add(group: RawGroup): number {
    const slot = this.groups.length;
    this.groups.push({ ...group, memberValues: [] });
    this.direct.push(new Set());
    this.unresolved.push([]);
    this.addMembers(slot, group.memberValues);
    return slot;
  }

  /** More member values of a group already added (range retrieval). */
  addMembers(slot: number, values: readonly string[]): void {
    const input = this.input;
    const users = this.direct[slot] as Set<string>;
    const rest = this.unresolved[slot] as string[];
    for (const raw of values) {
      if (input.memberAttribute === 'memberUid') {
        const id = input.userByUid.get(raw.trim().toLowerCase());
        if (id !== undefined) users.add(id);
        else this.stats.membersOutsideScope++;
        continue;
      }
      const key = dnKey(input.memberAttribute === 'uniqueMember' ? stripOptionalUid(raw) : raw);
      const userId = input.userByDn.get(key);
      if (userId !== undefined) users.add(userId);
      else rest.push(key);
    }
  }

  finish(): MembershipResult {
    const { input, stats, direct } = this;
    const index = new Map<string, number>();
    this.groups.forEach((g, i) => index.set(dnKey(g.dn), i));
    const children: number[][] = this.unresolved.map((keys) => {
      const kids: number[] = [];
      for (const key of keys) {
        const child = index.get(key);
        if (child !== undefined) {
          if (input.flattenNested) kids.push(child);
          else stats.nestedGroupsIgnored++;
        } else if (input.rejectedUserDns.has(key)) stats.membersRejected++;
        else stats.membersOutsideScope++;
      }
      return kids;
    });

    const groups: NormalizedGroup[] = this.groups.map((g, i) => {
      const own = direct[i] as Set<string>;
      const kids = children[i] as number[];
      if (kids.length === 0) return { externalId: g.externalId, displayName: g.displayName, members: [...own] };
      const members = new Set(own);
      // Walk every reachable group once; `seen` is what cuts a cycle.
      const seen = new Set<number>([i]);
      const stack = [...kids];
      let inCycle = false;
      while (stack.length > 0) {
        const c = stack.pop() as number;
        if (c === i) inCycle = true;
        if (seen.has(c)) continue;
        seen.add(c);
        for (const u of direct[c] ?? []) members.add(u);
        for (const k of children[c] ?? []) stack.push(k);
      }
      if (inCycle) stats.groupsInCycles++;
      return { externalId: g.externalId, displayName: g.displayName, members: [...members] };
    });
    const nested = new Map<string, string[]>();
    children.forEach((kids, i) => {
      if (kids.length > 0)
        nested.set(
          (this.groups[i] as RawGroup).externalId,
          kids.map((k) => (this.groups[k] as RawGroup).externalId),
        );
    });
    return { groups, stats, nested };
  }
}

/** Every group from which one of `ids` can be reached through nesting (not `ids` themselves, unless in a cycle). */
export function ancestorGroups(nested: ReadonlyMap<string, readonly string[]>, ids: Iterable<string>): Set<string> {
  const parents = new Map<string, string[]>();
  for (const [parent, kids] of nested) for (const k of kids) parents.set(k, [...(parents.get(k) ?? []), parent]);
  const out = new Set<string>();
  const stack = [...ids];
  while (stack.length > 0) {
    for (const p of parents.get(stack.pop() as string) ?? []) {
      if (out.has(p)) continue;
      out.add(p);
      stack.push(p);
    }
  }
  return out;
}

/** All at once: the groups' member values resolved against the users (see MembershipResolver). */
export function resolveMemberships(input: MembershipInput): MembershipResult {
  const resolver = new MembershipResolver(input);
  for (const g of input.groups) resolver.add(g);
  return resolver.finish();
}
