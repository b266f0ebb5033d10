/**
 * What a targeted plan cannot decide locally. Each check names a stable defer reason
 * (types.ts DeferReason); the full reconcile then plans with the whole platform in view.
 */
import { nameKey } from '../../identity/canonical-name.ts';
import { isUnidentified } from '../../identity/model.ts';
import type { ScimGroup, ScimUser } from '../../platform/scim/types.ts';
import type { Ledger, ObjectKind } from '../ledger.ts';
import type { Plan } from '../plan-types.ts';
import { Deferral, type Neighbourhood } from './neighbourhood.ts';

/**
 * Two platform objects that one name or one externalId could both mean: the full planner
 * settles them by listing order, which a neighbourhood does not have.
 */
export function ambiguity(n: Neighbourhood, ledger: Ledger): string | undefined {
  return (
    sharedKey('user', [...n.users.values()], (u) => u.userName, ledger) ??
    sharedKey('group', [...n.groups.values()], (g) => g.displayName, ledger)
  );
}

function sharedKey<T extends ScimUser | ScimGroup>(
  kind: ObjectKind,
  objects: T[],
  nameOf: (o: T) => string | undefined,
  ledger: Ledger,
): string | undefined {
  const seen = new Map<string, string>();
  for (const o of objects) {
    const name = nameOf(o);
    const keys = new Set<string>();
    if (name !== undefined) keys.add(`name ${nameKey(name)}`);
    const l = ledger.get(kind, o.id)?.externalId;
    if (l !== undefined) keys.add(`externalId ${l}`);
    if (typeof o.externalId === 'string' && o.externalId !== '') keys.add(`externalId ${o.externalId}`);
    for (const k of keys) {
      const other = seen.get(k);
      if (other !== undefined && other !== o.id) return `platform ${kind}s ${other} and ${o.id} share the ${k.split(' ')[0]}`;
      seen.set(k, o.id);
    }
  }
  return undefined;
}

/** A rename or create left out because another object holds the name (plan-users.ts, plan-groups.ts). */
const NAME_HELD = /^(userName|displayName) change to .* not applied: |^not created: the (userName|displayName) is held by /;

/** Conflicts, held names, unidentified rejections and a tripped guard: the full reconcile decides. */
export function deferralOf(plan: Plan): Deferral | undefined {
  const conflict = plan.conflicts?.[0];
  if (conflict !== undefined)
    return new Deferral(
      'name-held',
      `${conflict.kind} ${conflict.name} is held by ${conflict.account.id} (owner ${conflict.account.owner})`,
    );
  const held = plan.skipped.find((s) => (s.kind === 'user' || s.kind === 'group') && NAME_HELD.test(s.reason));
  if (held !== undefined) return new Deferral('name-held', `${held.kind} ${held.ref}: ${held.reason}`);
  const destructive = plan.summary.usersDeactivate + plan.summary.usersDelete + plan.summary.groupsDelete + plan.summary.membersRemove;
  const blind = plan.rejected.filter((r) => isUnidentified(r)).length;
  if (blind > 0 && destructive > 0) {
    return new Deferral(
      'unidentified-rejection',
      `${blind} source entries were rejected without a readable identity and the plan removes access`,
    );
  }
  if (plan.guard.tripped) return new Deferral('guard', plan.guard.reasons.join('; '));
  return undefined;
}

/** Every object the plan writes was read (or is created) in the neighbourhood. */
export function outsideNeighbourhood(plan: Plan, n: Neighbourhood): Deferral | undefined {
  const user = (id: string | null | undefined, ext: string | undefined): boolean =>
    id !== undefined && id !== null ? n.users.has(id) : ext !== undefined && n.userIdentities.has(ext);
  const group = (id: string | null | undefined, ext: string | undefined): boolean =>
    id !== undefined && id !== null ? n.groups.has(id) : ext !== undefined && n.groupIdentities.has(ext);
  const out: string[] = [];
  for (const c of plan.users.create) if (!user(undefined, c.externalId)) out.push(`create user ${c.externalId}`);
  for (const list of [plan.users.update, plan.users.reactivate, plan.users.deactivate, plan.users.delete])
    for (const u of list) if (!user(u.id, undefined)) out.push(`user ${u.id}`);
  for (const c of plan.groups.create) if (!group(undefined, c.externalId)) out.push(`create group ${c.externalId}`);
  for (const list of [plan.groups.update, plan.groups.delete]) for (const g of list) if (!group(g.id, undefined)) out.push(`group ${g.id}`);
  for (const m of plan.memberships) {
    if (!group(m.group.id, m.group.externalId)) out.push(`members of group ${m.group.externalId}`);
    for (const r of [...m.add, ...m.remove]) if (!user(r.id, r.externalId)) out.push(`member ${r.externalId ?? r.id ?? '?'}`);
  }
  for (const a of plan.attributes?.users ?? []) if (!user(a.id, a.externalId)) out.push(`attributes of ${a.externalId}`);
  if (out.length === 0) return undefined;
  return new Deferral('outside-neighbourhood', `the plan writes objects it did not read: ${out.slice(0, 5).join(', ')}`);
}
