/**
 * The accidental-deletion guard (like Entra's threshold). A plan is held — every destructive
 * operation (deactivations, deletions, group deletions, member removals) is left out — when:
 * - deactivations + deletions exceed an absolute or relative limit of the managed objects, or
 * - member removals exceed their own absolute or relative limit, or
 * - the source returned no users (or only rejected ones) while objects are managed, or listed no member in any group
 *   while members would be removed (a membership read that came back empty), or
 * - source entries were rejected without any readable identity while the plan would
 *   deprovision someone they could be (reconcile.md, "Present but invalid").
 * `--allow-deletes` overrides it for one run; an approval (`approve-deletes`) overrides it only
 * for a plan no larger than the one that was held.
 */
import type { DeleteApproval, GuardVerdict } from './plan-types.ts';

export interface GuardInput {
  destructive: number;
  /** Managed users + groups in the platform listing (under the ownership mode). */
  managed: number;
  memberRemovals: number;
  /** Members of the managed groups compared by this plan. */
  members: number;
  sourceEmpty: boolean;
  /** User entries the source returned but rejected (with sourceEmpty: every entry it returned). */
  sourceRejectedUsers: number;
  /** Every in-scope source group lists no member. */
  sourceMembersEmpty: boolean;
  /** Reasons from rejections without identity (already worded), empty when none apply. */
  unidentified: string[];
  limits: { maxDeletes: number; maxDeletePercent: number; maxMemberRemovals: number; maxMemberRemovalPercent: number };
  allowDeletes: boolean;
  approval?: DeleteApproval | undefined;
}

export function evaluateGuard(input: GuardInput): GuardVerdict {
  const reasons: string[] = [];
  const { destructive, managed, memberRemovals, members, limits } = input;
  if (input.sourceEmpty && managed > 0) {
    const rejected = input.sourceRejectedUsers;
    reasons.push(
      rejected > 0
        ? `the source returned no valid users (${rejected} ${rejected === 1 ? 'entry' : 'entries'} rejected) while ${managed} objects are managed`
        : `the source returned no users while ${managed} objects are managed`,
    );
  }
  if (destructive > limits.maxDeletes) {
    reasons.push(`${destructive} deactivations/deletions exceed guards.maxDeletes (${limits.maxDeletes})`);
  }
  if (managed > 0 && destructive > 0) {
    const pct = (destructive / managed) * 100;
    if (pct > limits.maxDeletePercent) {
      reasons.push(
        `${destructive} of ${managed} managed objects (${pct.toFixed(1)}%) exceed guards.maxDeletePercent (${limits.maxDeletePercent}%)`,
      );
    }
  }
  if (input.sourceMembersEmpty && memberRemovals > 0 && !input.sourceEmpty) {
    reasons.push(`the source lists no member in any group while ${memberRemovals} members would be removed`);
  }
  if (memberRemovals > limits.maxMemberRemovals) {
    reasons.push(`${memberRemovals} member removals exceed guards.maxMemberRemovals (${limits.maxMemberRemovals})`);
  }
  if (members > 0 && memberRemovals > 0) {
    const pct = (memberRemovals / members) * 100;
    if (pct > limits.maxMemberRemovalPercent) {
      reasons.push(
        `${memberRemovals} of ${members} group members (${pct.toFixed(1)}%) exceed guards.maxMemberRemovalPercent (${limits.maxMemberRemovalPercent}%)`,
      );
    }
  }
  reasons.push(...input.unidentified);
  const exceeded = reasons.length > 0;
  const a = input.approval;
  const approved = a !== undefined && destructive <= a.destructive && memberRemovals <= a.memberRemovals;
  if (exceeded && a !== undefined && !approved && !input.allowDeletes) {
    reasons.push(
      `the approval covers ${a.destructive} deactivations/deletions and ${a.memberRemovals} member removals; this plan has ${destructive} and ${memberRemovals}: approve again after checking it`,
    );
  }
  const override = input.allowDeletes || approved;
  return {
    tripped: exceeded && !override,
    reasons,
    destructive,
    managed,
    maxDeletes: limits.maxDeletes,
    maxDeletePercent: limits.maxDeletePercent,
    memberRemovals,
    members,
    maxMemberRemovals: limits.maxMemberRemovals,
    maxMemberRemovalPercent: limits.maxMemberRemovalPercent,
    overridden: exceeded && override,
    ...(a !== undefined ? { approval: a } : {}),
  };
}
