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
}

export function resolveMemberships(input: MembershipInput): MembershipResult {
  const stats: MembershipStats = { membersOutsideScope: 0, membersRejected: 0, nestedGroupsIgnored: 0, groupsInCycles: 0 };
  const index = new Map<string, number>();
  input.groups.forEach((g, i) => index.set(dnKey(g.dn), i));

  const direct: Set<string>[] = [];
  const children: number[][] = [];
  for (const g of input.groups) {
    const users = new Set<string>();
    const kids: number[] = [];
    for (const raw of g.memberValues) {
      if (input.memberAttribute === 'memberUid') {
        const id = input.userByUid.get(raw.trim().toLowerCase());
        if (id !== undefined) users.add(id);
        else stats.membersOutsideScope++;
        continue;
      }
      const key = dnKey(input.memberAttribute === 'uniqueMember' ? stripOptionalUid(raw) : raw);
      const userId = input.userByDn.get(key);
      if (userId !== undefined) {
        users.add(userId);
        continue;
      }
      const child = index.get(key);
      if (child !== undefined) {
        if (input.flattenNested) kids.push(child);
        else stats.nestedGroupsIgnored++;
      } else if (input.rejectedUserDns.has(key)) stats.membersRejected++;
      else stats.membersOutsideScope++;
    }
    direct.push(users);
    children.push(kids);
  }

  const groups: NormalizedGroup[] = input.groups.map((g, i) => {
    const members = new Set(direct[i]);
    // Walk every reachable group once; `seen` is what cuts a cycle.
    const seen = new Set<number>([i]);
    const stack = [...(children[i] ?? [])];
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
  return { groups, stats };
}
