/**
 * planTargeted: see types.ts. The neighbourhood of a change is read from the platform
 * (neighbourhood.ts) and planned by the same planner as a full reconcile (planner.ts, then the
 * user-attribute step), over the desired records of exactly the identities it reaches. The
 * plan is then checked (checks.ts): whatever could depend on objects it did not read, or
 * would need an operator, defers to a full reconcile instead.
 */
import { isSyncError } from '../../errors.ts';
import type { DesiredState, NormalizedGroup, NormalizedUser } from '../../identity/model.ts';
import { compileScope } from '../../identity/scope.ts';
import { addAttributePlan } from '../attributes/plan-step.ts';
import type { GuardBase } from '../plan-context.ts';
import { buildPlan } from '../planner.ts';
import { ambiguity, deferralOf, outsideNeighbourhood } from './checks.ts';
import { desiredLookup, type DesiredLookup } from './desired-cache.ts';
import { Deferral, emptyNeighbourhood, readNeighbourhood, type Neighbourhood } from './neighbourhood.ts';
import { TARGETED_LIMITS, type TargetedInput, type TargetedOutcome } from './types.ts';

export async function planTargeted(input: TargetedInput): Promise<TargetedOutcome> {
  const lookup = desiredLookup(input.desired);
  const n = emptyNeighbourhood();
  const reads = (): number => n.reads.users + n.reads.memberships;
  try {
    await readNeighbourhood(
      {
        target: input.target,
        ledger: input.ledger,
        desired: lookup,
        affected: input.affected,
        maxGroupMembers: input.maxGroupMembers ?? TARGETED_LIMITS.maxGroupMembers,
        maxIdentities: input.maxIdentities ?? TARGETED_LIMITS.maxIdentities,
        signal: input.signal,
      },
      n,
    );
    const ambiguous = ambiguity(n, input.ledger);
    if (ambiguous !== undefined) throw new Deferral('ambiguous-match', ambiguous);

    const desired = neighbourhoodDesired(lookup, n);
    const platformUsers = [...n.users.values()];
    const plan = buildPlan({
      tenant: input.tenant,
      source: input.source,
      desired,
      platformUsers,
      platformGroups: [...n.groups.values()],
      ledger: input.ledger,
      config: input.config,
      allowDeletes: input.allowDeletes,
      now: input.now,
      guardBase: guardBase(input, lookup.state),
    });
    if (input.attributes && input.config.userAttributes.length > 0) {
      await addAttributePlan(plan, {
        target: input.attributes,
        desired,
        platformUsers,
        ledger: input.ledger,
        config: input.config,
        allowDeletes: input.allowDeletes,
        now: input.now,
        signal: input.signal,
        // The users a full plan syncs are the source's users matched to a managed account: the valid users are their measure.
        guardUsers: Math.max(lookup.state.users.length, 1),
      });
    }
    const deferral = deferralOf(plan) ?? outsideNeighbourhood(plan, n);
    if (deferral !== undefined) throw deferral;
    return {
      kind: 'plan',
      plan,
      reads: reads(),
      readsBy: { ...n.reads },
      neighbourhood: { users: [...n.userIdentities], groups: [...n.groupIdentities] },
    };
  } catch (e) {
    if (e instanceof Deferral) return { kind: 'defer', reason: e.reason, detail: e.detail, reads: reads() };
    // A bad credential or a stop stays what it is; anything else the platform answered means
    // the neighbourhood could not be read: the full reconcile reads (and reports) it.
    if (input.signal?.aborted === true || !isSyncError(e) || e.kind === 'fatal') throw e;
    return { kind: 'defer', reason: 'platform-unreadable', detail: `${e.code}: ${e.message}`, reads: reads() };
  }
}

/**
 * The desired records of the identities in the neighbourhood, in the source's order, every
 * rejection of the source (present but invalid protects whatever it names) and the groups'
 * member lists reduced to the neighbourhood's users: a member outside it is unchanged on the
 * platform, so leaving it out changes no membership.
 */
function neighbourhoodDesired(lookup: DesiredLookup, n: Neighbourhood): DesiredState {
  const users = [...n.userIdentities]
    .map((e) => lookup.user(e))
    .filter((u): u is NormalizedUser => u !== undefined)
    .sort((a, b) => lookup.userPosition(a.externalId) - lookup.userPosition(b.externalId));
  const groups = [...n.groupIdentities]
    .map((e) => lookup.group(e))
    .filter((g): g is NormalizedGroup => g !== undefined)
    .sort((a, b) => lookup.groupPosition(a.externalId) - lookup.groupPosition(b.externalId))
    .map((g) => ({ ...g, members: g.members.filter((m) => n.userIdentities.has(m)) }));
  return { users, groups, rejected: lookup.state.rejected, stats: lookup.state.stats };
}

/** The guard's figures of the whole tenant (reconcile.md, "Targeted reconcile"). */
function guardBase(input: TargetedInput, whole: DesiredState): GuardBase {
  const scope = compileScope<NormalizedGroup>(input.config.scope.groups, 'provisioning.scope.groups');
  let inScope = 0;
  let withMembers = 0;
  for (const g of whole.groups) {
    if (!scope(g)) continue;
    inScope++;
    if (g.members.length > 0) withMembers++;
  }
  return {
    managed: input.managedAtLastFull,
    members: input.membersAtLastFull,
    sourceUsers: whole.users.length,
    sourceMembersEmpty: inScope > 0 && withMembers === 0,
  };
}
