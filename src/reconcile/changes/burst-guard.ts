/**
 * The deletion guard over time. A full plan is checked against provisioning.guards as a whole;
 * changes arrive one by one, so the change path counts its destructive operations
 * (deactivations, deletions, group deletions, member removals) over a rolling window
 * (provisioning.changes.burstWindowMinutes) against the same limits: a burst of leavers
 * applied one at a time trips the guard as if they had come in one run.
 *
 * When a batch would exceed them, its destructive operations are held (the rest is applied)
 * and a *burst hold* is recorded: every later batch holds its destructive operations too, and
 * the full reconcile it requests holds them exactly as a held full plan, until an operator
 * approves (`approve-deletes`) — the approval is bound to what the full plan then holds.
 */
import type { ProvisioningConfig } from '../../config/schema.ts';
import type { DeleteApproval, Plan } from '../plan-types.ts';

export interface BurstCounts {
  destructive: number;
  memberRemovals: number;
}

export interface BurstHold extends BurstCounts {
  reasons: string[];
  /** Epoch ms. */
  at: number;
}

/** Where the window and the hold are kept (Redis in the daemon, memory in `watch`). */
export interface BurstStore {
  /** Destructive operations the change path applied since `sinceMs`. */
  appliedSince(sinceMs: number): Promise<BurstCounts>;
  recordApplied(at: number, counts: BurstCounts): Promise<void>;
  hold(): Promise<BurstHold | undefined>;
  setHold(hold: BurstHold): Promise<void>;
  /** A full reconcile applied (or found nothing destructive): the hold and the window start again. */
  clear(): Promise<void>;
}

/** The destructive operations of a plan, as the guard counts them. */
export function destructiveCounts(plan: Plan): BurstCounts {
  return { destructive: plan.guard.destructive, memberRemovals: plan.guard.memberRemovals };
}

export interface BurstVerdict {
  held: boolean;
  reasons: string[];
  /** The window's count including this batch. */
  window: BurstCounts;
}

/**
 * Does this batch, added to what the window already applied, exceed the guard? `managed`:
 * the managed objects at the last full reconcile (the base of maxDeletePercent). Member
 * removals count against maxMemberRemovals (the percentage needs a full plan's member count).
 */
export function checkBurst(
  batch: BurstCounts,
  applied: BurstCounts,
  managed: number,
  cfg: Pick<ProvisioningConfig, 'guards' | 'changes'>,
  hold: BurstHold | undefined,
): BurstVerdict {
  const window = { destructive: applied.destructive + batch.destructive, memberRemovals: applied.memberRemovals + batch.memberRemovals };
  if (batch.destructive === 0 && batch.memberRemovals === 0) return { held: false, reasons: [], window };
  const g = cfg.guards;
  const minutes = cfg.changes.burstWindowMinutes;
  const reasons: string[] = [];
  if (hold !== undefined) reasons.push(`destructive changes are held since ${new Date(hold.at).toISOString()} until approve-deletes`);
  if (window.destructive > g.maxDeletes)
    reasons.push(`${window.destructive} deactivations/deletions within ${minutes} min exceed guards.maxDeletes (${g.maxDeletes})`);
  if (managed > 0 && window.destructive > 0) {
    const pct = (window.destructive / managed) * 100;
    if (pct > g.maxDeletePercent)
      reasons.push(
        `${window.destructive} of ${managed} managed objects (${pct.toFixed(1)}%) within ${minutes} min exceed guards.maxDeletePercent (${g.maxDeletePercent}%)`,
      );
  }
  if (window.memberRemovals > g.maxMemberRemovals)
    reasons.push(`${window.memberRemovals} member removals within ${minutes} min exceed guards.maxMemberRemovals (${g.maxMemberRemovals})`);
  return { held: reasons.length > 0, reasons, window };
}

/** Leaves the plan's destructive operations out (planPhases skips them when the guard is tripped). */
export function holdDestructive(plan: Plan, reasons: string[]): void {
  plan.guard.tripped = true;
  plan.guard.overridden = false;
  for (const r of reasons) if (!plan.guard.reasons.includes(r)) plan.guard.reasons.push(r);
}

/**
 * A full plan under a burst hold: its destructive operations are held like those of a plan
 * that tripped the guard, unless an approval covers them (no more than what it was given for).
 * Returns true when it held them.
 */
export function enforceBurstHold(plan: Plan, hold: BurstHold | undefined, approval: DeleteApproval | undefined): boolean {
  if (hold === undefined) return false;
  const { destructive, memberRemovals } = destructiveCounts(plan);
  if (destructive === 0 && memberRemovals === 0) return false;
  if (plan.guard.tripped) return false;
  const approved = approval !== undefined && destructive <= approval.destructive && memberRemovals <= approval.memberRemovals;
  if (approved) {
    plan.guard.overridden = true;
    return false;
  }
  holdDestructive(plan, [...hold.reasons, 'a burst of destructive changes is held: approve-deletes releases it']);
  return true;
}

/** The window and the hold in memory (`watch`: one process, no Redis; a restart starts them again). */
export class MemoryBurstStore implements BurstStore {
  private applied: Array<{ at: number } & BurstCounts> = [];
  private held: BurstHold | undefined;

  async appliedSince(sinceMs: number): Promise<BurstCounts> {
    this.applied = this.applied.filter((a) => a.at >= sinceMs);
    return this.applied.reduce((s, a) => ({ destructive: s.destructive + a.destructive, memberRemovals: s.memberRemovals + a.memberRemovals }), {
      destructive: 0,
      memberRemovals: 0,
    });
  }

  async recordApplied(at: number, counts: BurstCounts): Promise<void> {
    if (counts.destructive > 0 || counts.memberRemovals > 0) this.applied.push({ at, ...counts });
  }

  async hold(): Promise<BurstHold | undefined> {
    return this.held;
  }

  async setHold(hold: BurstHold): Promise<void> {
    this.held = hold;
  }

  async clear(): Promise<void> {
    this.held = undefined;
    this.applied = [];
  }
}
