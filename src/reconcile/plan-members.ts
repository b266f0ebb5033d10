/**
 * Memberships. A source member counts as wanted when it resolves to any platform user
 * (managed or not, in scope or not) or to a user created in this run. A platform member is
 * removed only when it positively maps to someone the source does not place in the group:
 * the account of another source user, or a managed account no source user claims (a leaver).
 * Members the source cannot vouch for either way — users this tool does not know, accounts
 * protected by a rejected entry, members whose reference the source rejected — are kept.
 * `membership: additive` never removes, except from an account handed over to a new owner. Pure.
 */
import type { NormalizedGroup } from '../identity/model.ts';
import type { ScimGroup } from '../platform/scim/types.ts';
import { isManaged, type PlanContext } from './plan-context.ts';
import type { GroupPlan } from './plan-groups.ts';
import type { MemberRef, MembershipChange } from './plan-types.ts';
import type { UserPlan } from './plan-users.ts';

export interface MemberPlan {
  memberships: MembershipChange[];
  /** Members of the compared platform groups (the guard's percentage base). */
  members: number;
  /** Removals of leavers' accounts (what an unidentified rejected user could be). */
  leaverRemovals: number;
}

export function planMemberships(ctx: PlanContext, users: UserPlan, groups: GroupPlan): MemberPlan {
  const out: MemberPlan = { memberships: [], members: 0, leaverRemovals: 0 };
  const authoritative = ctx.config.membership === 'authoritative';
  // An account handed over to a new owner (matching.handOverLeaverAccountsByName) keeps only
  // the groups the source gives its new owner, whatever the membership mode.
  const handedOver = new Set([...users.update, ...users.reactivate].filter((u) => u.handoverFrom !== undefined).map((u) => u.id));
  // Member references the source rejected, by group externalId.
  const rejectedMembers = new Map<string, Set<string>>();
  for (const r of ctx.input.desired.rejected) {
    if (r.member === undefined || r.externalId === undefined) continue;
    const set = rejectedMembers.get(r.externalId) ?? new Set<string>();
    set.add(r.member);
    rejectedMembers.set(r.externalId, set);
  }

  for (const { source: g, platform } of groups.compared) {
    const wanted = resolveMembers(ctx, g, users);
    const group = { id: platform?.id, externalId: g.externalId, displayName: g.displayName };
    if (platform === undefined) {
      if (wanted.length > 0) out.memberships.push({ group, add: wanted, remove: [] });
      continue;
    }
    const actual = new Set((platform.members ?? []).map((m) => m.value));
    out.members += actual.size;
    const wantedIds = new Set(wanted.map((m) => m.id).filter((x): x is string => x !== undefined));
    const add = wanted.filter((m) => m.id === undefined || !actual.has(m.id));
    const remove: MemberRef[] = [];
    if (authoritative || handedOver.size > 0) {
      const refs = rejectedMembers.get(g.externalId);
      for (const id of actual) {
        if (!authoritative && !handedOver.has(id)) continue;
        if (wantedIds.has(id) || kept(ctx, platform, id, users, refs)) continue;
        const owner = users.match.claimedBy.get(id);
        const u = users.byId.get(id);
        const leaver = owner === undefined && u !== undefined && !users.match.duplicates.has(id) && isManaged(ctx, 'user', u);
        if (owner === undefined && !leaver) continue; // not someone this tool can place: kept
        if (leaver) out.leaverRemovals++;
        remove.push({ id, externalId: owner ?? u?.externalId ?? ctx.ledger.get('user', id)?.externalId, userName: u?.userName });
        notConverging(ctx, platform, id, u?.userName);
      }
    }
    if (add.length > 0 || remove.length > 0) out.memberships.push({ group: { ...group, id: platform.id }, add, remove });
  }
  return out;
}

function resolveMembers(ctx: PlanContext, g: NormalizedGroup, users: UserPlan): MemberRef[] {
  const out: MemberRef[] = [];
  const seen = new Set<string>();
  for (const ext of g.members) {
    if (seen.has(ext)) continue;
    seen.add(ext);
    if (users.memberIds.has(ext)) {
      out.push({ externalId: ext, userName: users.userNames.get(ext), id: users.memberIds.get(ext) });
      continue;
    }
    // Not a source user we provision, but a platform account carries that id: still wanted.
    const account = users.accountsFor(ext).find((p) => {
      const owner = users.match.claimedBy.get(p.id);
      return owner === undefined || owner === ext;
    });
    if (account) {
      out.push({ externalId: ext, userName: account.userName, id: account.id });
      continue;
    }
    // People are named by userName in the plan, never by an opaque id (an LDAP entryUUID, an AD objectGUID).
    const name = ctx.input.desired.users.find((u) => u.externalId === ext)?.userName ?? ext;
    ctx.skipped.push({
      kind: 'member',
      ref: `${g.displayName} ← ${name}`,
      reason: 'member is not a provisioned user (unknown, out of scope, inactive or unmanaged)',
    });
  }
  return out;
}

/** A platform member the source cannot vouch for: a protected account, or a rejected member reference. */
function kept(ctx: PlanContext, platform: ScimGroup, id: string, users: UserPlan, rejectedRefs: Set<string> | undefined): boolean {
  if (users.match.protectedBy.has(id)) return true;
  if (rejectedRefs === undefined) return false;
  const u = users.byId.get(id);
  const ext = [u?.externalId, ctx.ledger.get('user', id)?.externalId].find((x) => x !== undefined && rejectedRefs.has(x));
  if (ext === undefined) return false;
  ctx.protected.push({
    kind: 'member',
    id,
    name: `${platform.displayName} ← ${u?.userName ?? id}`,
    externalId: ext,
    rejection: `member reference of group ${platform.displayName}`,
    held: 'not removed from the group: the source rejected its member reference',
  });
  return true;
}

/** A removal the server acknowledged in an earlier run but did not perform (ledger.removed). */
function notConverging(ctx: PlanContext, platform: ScimGroup, memberId: string, userName: string | undefined): void {
  const removed = ctx.ledger.get('group', platform.id)?.removed;
  if (!removed?.ids.includes(memberId)) return;
  ctx.warnings.push({
    code: 'removal-not-converging',
    ref: `${platform.displayName} ← ${userName ?? memberId}`,
    message: `removed by the run of ${new Date(removed.at).toISOString()} (the server acknowledged it) and still a member: the server may not perform member removals, or someone added the member back`,
  });
}
