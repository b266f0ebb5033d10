/**
 * The users part of a plan: creates, updates (renames with their temporary step),
 * reactivations and deprovisioning, from the global match (match.ts). Pure.
 */
import { isUnidentified, type NormalizedUser } from '../identity/model.ts';
import { mapUser } from '../identity/mapping.ts';
import { compileScope } from '../identity/scope.ts';
import type { ScimUser } from '../platform/scim/types.ts';
import { diffAttributes } from './compare.ts';
import { MultiIndex, matchObjects, type MatchResult } from './match.ts';
import { isAdopting, isManaged, userRejections, withoutPath, type PlanContext } from './plan-context.ts';
import type { IdentityConflict, RemovalReason, UserCreate, UserRemoval, UserUpdate } from './plan-types.ts';
import { planRenames, tempUserName } from './renames.ts';

const DAY_MS = 86_400_000;

export interface UserPlan {
  create: UserCreate[];
  update: UserUpdate[];
  reactivate: UserUpdate[];
  deactivate: UserRemoval[];
  delete: UserRemoval[];
  match: MatchResult<ScimUser>;
  /** Source externalId → platform id of its account, or undefined when it is created in this run. */
  memberIds: Map<string, string | undefined>;
  /** Source externalId → userName (for member references). */
  userNames: Map<string, string>;
  /** Platform users by id. */
  byId: Map<string, ScimUser>;
  /** Platform users carrying an externalId (ledger or platform); built on first use (rare). */
  accountsFor(ext: string): ScimUser[];
  /** Platform ids deprovisioned because they are not in the source (what an unidentified rejection could be). */
  leavers: Set<string>;
  inScope: number;
}

export interface UserPlanOptions {
  /** May a user this run deletes free its userName for a rename of the same run? Not while the guard holds the deletes. */
  deletesFreeNames: boolean;
}

export function planUsers(ctx: PlanContext, opts: UserPlanOptions = { deletesFreeNames: true }): UserPlan {
  const { input, config, ledger, skipped } = ctx;
  const scope = compileScope<NormalizedUser>(config.scope.users, 'provisioning.scope.users');
  const rejected = userRejections(input.desired.rejected).filter((r) => !isUnidentified(r));
  const match = matchObjects<NormalizedUser, ScimUser>({
    kind: 'user',
    source: input.desired.users,
    extOf: (u) => u.externalId,
    nameOf: (u) => u.userName,
    platform: input.platformUsers,
    platformNameOf: (p) => p.userName,
    ledger,
    rejected,
    rejectedNameOf: (r) => r.userName,
    identityIsForever: true,
    handOverByName: config.matching.handOverLeaverAccountsByName,
  });
  let byAnyExt: [MultiIndex<ScimUser>, MultiIndex<ScimUser>] | undefined;
  const out: UserPlan = {
    create: [],
    update: [],
    reactivate: [],
    deactivate: [],
    delete: [],
    match,
    memberIds: new Map(),
    userNames: new Map(),
    byId: new Map(input.platformUsers.map((u) => [u.id, u])),
    accountsFor: (ext) => {
      byAnyExt ??= [
        new MultiIndex(input.platformUsers, (p) => p.externalId),
        new MultiIndex(input.platformUsers, (p) => ledger.get('user', p.id)?.externalId),
      ];
      return [...new Set([...byAnyExt[0].get(ext), ...byAnyExt[1].get(ext)])];
    },
    leavers: new Set(),
    inScope: 0,
  };

  const removal = (p: ScimUser, externalId: string, reason: RemovalReason): void => {
    const action = config.deprovision.action;
    if (action === 'none') return;
    const r: UserRemoval = { id: p.id, externalId, userName: p.userName, reason };
    if (action === 'delete') out.delete.push(r);
    else if (p.active !== false) out.deactivate.push(r);
    else if (config.deprovision.deleteAfterDays > 0) {
      const at = ledger.get('user', p.id)?.deactivatedAt;
      if (at !== undefined && input.now - at >= config.deprovision.deleteAfterDays * DAY_MS)
        out.delete.push({ ...r, reason: 'grace-period-expired' });
    }
  };

  const toCreate: UserCreate[] = [];
  for (const u of input.desired.users) {
    const inScope = scope(u);
    if (inScope) out.inScope++;
    const hit = match.matched.get(u.externalId);
    if (!hit) {
      if (!inScope) continue;
      if (!u.active) {
        skipped.push({ kind: 'user', ref: u.userName, reason: 'inactive in the source and absent from the platform: not created' });
        continue;
      }
      toCreate.push({ externalId: u.externalId, userName: u.userName, resource: mapUser(u, config.mapping.user, config.emails).resource });
      continue;
    }
    const p = hit.platform;
    // Whatever else happens to the account, the person it belongs to counts as a group member.
    out.memberIds.set(u.externalId, p.id);
    out.userNames.set(u.externalId, u.userName);
    const managed = isManaged(ctx, 'user', p, u.externalId);
    if (!inScope) {
      if (managed) removal(p, u.externalId, 'out-of-scope');
      continue;
    }
    if (!managed && !config.matching.adoptExisting) {
      skipped.push({
        kind: 'user',
        ref: u.userName,
        reason: 'exists on the platform but is not managed by this tool (set provisioning.matching.adoptExisting: true to take it over)',
        code: 'unmanaged',
      });
      continue;
    }
    const want = mapUser(u, config.mapping.user, config.emails);
    const adopt = isAdopting(ctx, 'user', p, u.externalId, managed);
    const { changes, ops } = diffAttributes(want.resource as Record<string, unknown>, p as Record<string, unknown>, want.managedPaths);
    const platformActive = p.active !== false;
    const from = match.handovers.get(u.externalId);
    const base = {
      id: p.id,
      externalId: u.externalId,
      userName: p.userName,
      changes,
      ops,
      adopt,
      ...(from !== undefined ? { handoverFrom: from } : {}),
    };
    if (!u.active && platformActive) {
      out.deactivate.push({ id: p.id, externalId: u.externalId, userName: p.userName, reason: 'disabled-in-source' });
      if (changes.length > 0 || adopt) out.update.push(base);
    } else if (u.active && !platformActive) {
      out.reactivate.push({
        ...base,
        changes: [...changes, { path: 'active', before: false, after: true }],
        ops: [...ops, { op: 'replace', path: 'active', value: true }],
      });
    } else if (changes.length > 0 || adopt) {
      out.update.push(base);
    }
  }

  // Platform accounts no source user claimed.
  for (const p of input.platformUsers) {
    if (match.claimedBy.has(p.id) || !isManaged(ctx, 'user', p)) continue;
    const externalId = p.externalId ?? ledger.get('user', p.id)?.externalId ?? '';
    const rejection = match.protectedBy.get(p.id);
    if (rejection) {
      ctx.protected.push({
        kind: 'user',
        id: p.id,
        name: p.userName,
        externalId: externalId || undefined,
        rejection: rejection.ref,
        held: 'not deprovisioned and not removed from any group: its source entry was rejected',
      });
      continue;
    }
    const owner = match.duplicates.get(p.id);
    if (owner !== undefined) {
      skipped.push({
        kind: 'user',
        ref: p.userName,
        reason: `a second platform account of source user ${owner} (whose account is ${match.matched.get(owner)?.platform.id ?? '?'}): left alone, resolve it by hand`,
      });
      continue;
    }
    const before = out.deactivate.length + out.delete.length;
    removal(p, externalId, 'not-in-source');
    if (out.deactivate.length + out.delete.length > before) out.leavers.add(p.id);
  }

  // Renames and creates whose name another account holds.
  const wanted = new Map(input.desired.users.map((u) => [u.externalId, u.userName]));
  const renaming = [...out.update, ...out.reactivate].filter((u) => u.changes.some((c) => c.path === 'userName'));
  // An account this run deletes does not hold its userName against a rename or create of the
  // same run; a delete whose name one of them takes is marked to run first (as for groups).
  const renames = planRenames(
    renaming.map((u) => ({ id: u.id, to: wanted.get(u.externalId) ?? u.userName })),
    toCreate.map((c) => ({ ext: c.externalId, name: c.userName })),
    (name) => match.byName.get(name),
    tempUserName,
    new Set(opts.deletesFreeNames ? out.delete.map((d) => d.id) : []),
  );
  for (const d of out.delete) if (renames.freedTaken.has(d.id)) d.freesName = true;
  for (const u of renaming) {
    const via = renames.via.get(u.id);
    if (via !== undefined) u.renameVia = via;
    const holder = renames.blockedRenames.get(u.id);
    if (holder === undefined) continue;
    const to = wanted.get(u.externalId) ?? '';
    const conflict = identityConflict(ctx, out, match, holder.id, { wants: 'rename', name: to, externalId: u.externalId });
    if (conflict) ctx.conflicts.push(conflict);
    skipped.push({
      kind: 'user',
      ref: u.userName,
      reason: `userName change to ${to} not applied: ${describeHolder(holder.id, out, match)}`,
    });
    Object.assign(u, withoutPath(u.changes, u.ops, 'userName'));
  }
  out.update = out.update.filter((u) => u.changes.length > 0 || u.adopt);
  for (const c of toCreate) {
    const holder = renames.blockedCreates.get(c.externalId);
    if (holder !== undefined) {
      const conflict = identityConflict(ctx, out, match, holder.id, { wants: 'create', name: c.userName, externalId: c.externalId });
      if (conflict) {
        ctx.conflicts.push(conflict);
        continue;
      }
      skipped.push({
        kind: 'user',
        ref: c.userName,
        reason: `not created: the userName is held by ${describeHolder(holder.id, out, match)}`,
      });
      continue;
    }
    out.create.push(c);
    out.memberIds.set(c.externalId, undefined);
    out.userNames.set(c.externalId, c.userName);
  }

  return out;
}

/**
 * A name held by the account of someone else who is not in the source (a leaver, or an
 * account carrying another person's externalId): an identity conflict, never a takeover.
 */
function identityConflict(
  ctx: PlanContext,
  plan: UserPlan,
  match: MatchResult<ScimUser>,
  holderId: string,
  want: Pick<IdentityConflict, 'wants' | 'name' | 'externalId'>,
): IdentityConflict | undefined {
  const p = plan.byId.get(holderId);
  if (p === undefined || match.claimedBy.has(holderId) || match.protectedBy.has(holderId) || match.duplicates.has(holderId))
    return undefined;
  const owner = match.ownerOf(p);
  if (owner === undefined || owner === want.externalId) return undefined;
  const held = plan.delete.some((d) => d.id === holderId)
    ? 'its deletion is held by the deletion guard; approving the deletion frees the name'
    : 'it keeps its userName until it is deleted';
  return {
    kind: 'user',
    ...want,
    account: { id: p.id, userName: p.userName, owner, active: p.active !== false },
    reason: `userName ${want.name} is held by platform user ${p.id} (${p.userName}), the account of ${owner}, who is not in the source; ${held}. An account never passes from one person to another: not ${want.wants === 'create' ? 'created' : 'renamed'}`,
    waysOut: ctx.ledger.has('user', p.id)
      ? [
          `the account's deletion frees the name: provisioning.deprovision.deleteAfterDays, or delete platform user ${p.id} by hand`,
          `if ${want.externalId} is the same person as ${owner} (an HR id migration, a rehire): scim-audit-sync ledger reassign --from ${owner} --to ${want.externalId}`,
          "to hand leavers' accounts over by name in this tenant: provisioning.matching.handOverLeaverAccountsByName: true",
        ]
      : [
          `the account is not managed by this tool: delete platform user ${p.id} by hand to free the name`,
          `if ${want.externalId} is the same person as ${owner}: clear or correct the account's externalId on the platform (an account no one owns is adopted with provisioning.matching.adoptExisting)`,
        ],
  };
}

function describeHolder(id: string, plan: UserPlan, match: MatchResult<ScimUser>): string {
  const p = plan.byId.get(id);
  const who = `platform user ${id} (${p?.userName ?? '?'})`;
  const owner = match.claimedBy.get(id);
  if (owner !== undefined) return `${who}, the account of source user ${owner}, which keeps it`;
  const rejection = match.protectedBy.get(id);
  if (rejection !== undefined) return `${who}, kept for the rejected source entry ${rejection.ref}`;
  if (plan.delete.some((d) => d.id === id)) return `${who}, whose deletion the guard holds: it follows the approved deletion`;
  if (plan.deactivate.some((d) => d.id === id) || p?.active === false)
    return `${who}, a deactivated account that keeps its userName until it is deleted (provisioning.deprovision.deleteAfterDays, or by hand)`;
  return `${who}, which this run does not rename`;
}
