/**
 * Desired state + platform snapshot + ledger → Plan. Pure: no I/O, no mutation of inputs.
 * Matching precedence: externalId, then userName (users) / displayName (groups), both
 * compared case-insensitively on our side.
 */
import type { ProvisioningConfig } from '../config/schema.ts';
import type { DesiredState, NormalizedGroup, NormalizedUser } from '../identity/model.ts';
import { mapGroup, mapUser } from '../identity/mapping.ts';
import { compileScope } from '../identity/scope.ts';
import type { ScimGroup, ScimUser } from '../platform/scim/types.ts';
import { diffAttributes } from './compare.ts';
import { evaluateGuard } from './guard.ts';
import type { Ledger, ObjectKind } from './ledger.ts';
import {
  PLAN_SCHEMA_VERSION,
  type GroupCreate,
  type GroupDelete,
  type GroupUpdate,
  type MemberRef,
  type MembershipChange,
  type Plan,
  type PlanSummary,
  type Skipped,
  type UserCreate,
  type UserRemoval,
  type UserUpdate,
} from './plan-types.ts';

export interface PlanInput {
  tenant: string;
  source: string;
  desired: DesiredState;
  platformUsers: ScimUser[];
  platformGroups: ScimGroup[];
  ledger: Ledger;
  config: ProvisioningConfig;
  allowDeletes: boolean;
  now: number;
}

const DAY_MS = 86_400_000;

export function buildPlan(input: PlanInput): Plan {
  const { config, ledger, desired } = input;
  const skipped: Skipped[] = [];
  const userScope = compileScope<NormalizedUser>(config.scope.users, 'provisioning.scope.users');
  const groupScope = compileScope<NormalizedGroup>(config.scope.groups, 'provisioning.scope.groups');
  const inSourceUsers = new Set(desired.users.map((u) => u.externalId));
  const scopedUsers = desired.users.filter(userScope);
  const scopedGroups = desired.groups.filter(groupScope);

  const isManaged = (kind: ObjectKind, obj: { id: string; externalId?: string }, desiredExternalId?: string): boolean =>
    ledger.has(kind, obj.id) ||
    (config.ownership.mode === 'externalId' && typeof obj.externalId === 'string' && obj.externalId !== '') ||
    (desiredExternalId !== undefined && obj.externalId === desiredExternalId && ledger.isPending(kind, desiredExternalId));
  // Matched only through a pending create (crash between POST and ledger save): plan it as an
  // adoption so apply records it; otherwise it would stay pending and never be deprovisioned.
  const adopting = (kind: ObjectKind, obj: { id: string; externalId?: string }, desiredExternalId: string, managed: boolean): boolean =>
    !managed || (!ledger.has(kind, obj.id) && obj.externalId === desiredExternalId && ledger.isPending(kind, desiredExternalId));

  // ---- users ----
  const usersByExt = indexBy(input.platformUsers, (u) => u.externalId);
  const usersByName = indexBy(input.platformUsers, (u) => u.userName?.toLowerCase());
  const usersById = indexBy(input.platformUsers, (u) => u.id);
  const claimedUsers = new Set<string>();
  /** source externalId → platform id (existing) or undefined (created in this run). */
  const userIdByExt = new Map<string, string | undefined>();
  const userNameByExt = new Map<string, string>();
  const create: UserCreate[] = [];
  const update: UserUpdate[] = [];
  const reactivate: UserUpdate[] = [];
  const deactivate: UserRemoval[] = [];
  const del: UserRemoval[] = [];

  for (const u of scopedUsers) {
    const want = mapUser(u, config.mapping.user);
    const match = usersByExt.get(u.externalId) ?? usersByName.get(u.userName.toLowerCase());
    if (!match) {
      if (!u.active) {
        skipped.push({ kind: 'user', ref: u.userName, reason: 'inactive in the source and absent from the platform: not created' });
        continue;
      }
      create.push({ externalId: u.externalId, userName: u.userName, resource: want.resource });
      userIdByExt.set(u.externalId, undefined);
      userNameByExt.set(u.externalId, u.userName);
      continue;
    }
    if (claimedUsers.has(match.id)) {
      skipped.push({ kind: 'user', ref: u.userName, reason: `matches platform user ${match.id} already matched by another source user` });
      continue;
    }
    const managed = isManaged('user', match, u.externalId);
    if (!managed && !config.matching.adoptExisting) {
      skipped.push({ kind: 'user', ref: u.userName, reason: 'exists on the platform but is not managed by this tool (set provisioning.matching.adoptExisting: true to take it over)', code: 'unmanaged' });
      continue;
    }
    claimedUsers.add(match.id);
    userIdByExt.set(u.externalId, match.id);
    userNameByExt.set(u.externalId, u.userName);
    const adopt = adopting('user', match, u.externalId, managed);
    const { changes, ops } = diffAttributes(want.resource as Record<string, unknown>, match as Record<string, unknown>, want.managedPaths);
    const platformActive = match.active !== false;
    if (!u.active && platformActive) {
      deactivate.push({ id: match.id, externalId: u.externalId, userName: match.userName, reason: 'disabled-in-source' });
      if (changes.length > 0 || adopt) update.push({ id: match.id, externalId: u.externalId, userName: match.userName, changes, ops, adopt });
    } else if (u.active && !platformActive) {
      reactivate.push({
        id: match.id,
        externalId: u.externalId,
        userName: match.userName,
        changes: [...changes, { path: 'active', before: false, after: true }],
        ops: [...ops, { op: 'replace', path: 'active', value: true }],
        adopt,
      });
    } else if (changes.length > 0 || adopt) {
      update.push({ id: match.id, externalId: u.externalId, userName: match.userName, changes, ops, adopt });
    }
  }

  if (config.deprovision.action !== 'none') {
    for (const p of input.platformUsers) {
      if (claimedUsers.has(p.id) || !isManaged('user', p)) continue;
      const externalId = p.externalId ?? ledger.get('user', p.id)?.externalId ?? '';
      const reason = inSourceUsers.has(externalId) ? 'out-of-scope' : 'not-in-source';
      const removal: UserRemoval = { id: p.id, externalId, userName: p.userName, reason };
      if (config.deprovision.action === 'delete') {
        del.push(removal);
      } else if (p.active !== false) {
        deactivate.push(removal);
      } else if (config.deprovision.deleteAfterDays > 0) {
        const at = ledger.get('user', p.id)?.deactivatedAt;
        if (at !== undefined && input.now - at >= config.deprovision.deleteAfterDays * DAY_MS) {
          del.push({ ...removal, reason: 'grace-period-expired' });
        }
      }
    }
  }

  // ---- groups ----
  // People are named by userName in the plan, never by an opaque id (an LDAP entryUUID, an AD objectGUID).
  const sourceNameByExt = new Map(desired.users.map((u) => [u.externalId, u.userName]));
  const groupsByExt = indexBy(input.platformGroups, (g) => g.externalId);
  const groupsByName = indexBy(input.platformGroups, (g) => g.displayName?.toLowerCase());
  const claimedGroups = new Set<string>();
  const gCreate: GroupCreate[] = [];
  const gUpdate: GroupUpdate[] = [];
  const gDelete: GroupDelete[] = [];
  const memberships: MembershipChange[] = [];

  for (const g of scopedGroups) {
    const want = mapGroup(g, config.mapping.group);
    const match = groupsByExt.get(g.externalId) ?? groupsByName.get(g.displayName.toLowerCase());
    const desiredMembers = resolveMembers(g, userIdByExt, userNameByExt, skipped, sourceNameByExt);
    if (!match) {
      gCreate.push({ externalId: g.externalId, displayName: g.displayName, resource: want.resource });
      if (desiredMembers.length > 0) {
        memberships.push({ group: { id: undefined, externalId: g.externalId, displayName: g.displayName }, add: desiredMembers, remove: [] });
      }
      continue;
    }
    if (claimedGroups.has(match.id)) {
      skipped.push({ kind: 'group', ref: g.displayName, reason: `matches platform group ${match.id} already matched by another source group` });
      continue;
    }
    const managed = isManaged('group', match, g.externalId);
    if (!managed && !config.matching.adoptExisting) {
      skipped.push({ kind: 'group', ref: g.displayName, reason: 'exists on the platform but is not managed by this tool (set provisioning.matching.adoptExisting: true to take it over)', code: 'unmanaged' });
      continue;
    }
    claimedGroups.add(match.id);
    const adopt = adopting('group', match, g.externalId, managed);
    const { changes, ops } = diffAttributes(want.resource as Record<string, unknown>, match as Record<string, unknown>, want.managedPaths);
    if (changes.length > 0 || adopt) {
      gUpdate.push({ id: match.id, externalId: g.externalId, displayName: g.displayName, changes, ops, adopt });
    }
    const actual = new Set((match.members ?? []).map((m) => m.value));
    const wanted = new Set(desiredMembers.map((m) => m.id).filter((x): x is string => x !== undefined));
    const add = desiredMembers.filter((m) => m.id === undefined || !actual.has(m.id));
    const remove: MemberRef[] = [...actual].filter((id) => !wanted.has(id)).map((id) => memberRefForId(id, usersById, ledger));
    if (add.length > 0 || remove.length > 0) {
      memberships.push({ group: { id: match.id, externalId: g.externalId, displayName: g.displayName }, add, remove });
    }
  }

  if (config.deprovision.deleteGroups && config.deprovision.action !== 'none') {
    for (const p of input.platformGroups) {
      if (claimedGroups.has(p.id) || !isManaged('group', p)) continue;
      gDelete.push({ id: p.id, externalId: p.externalId ?? ledger.get('group', p.id)?.externalId ?? '', displayName: p.displayName });
    }
  }

  const guard = evaluateGuard({
    destructive: deactivate.length + del.length + gDelete.length,
    managed: ledger.count('user') + ledger.count('group'),
    sourceEmpty: desired.users.length === 0,
    limits: config.guards,
    allowDeletes: input.allowDeletes,
  });

  const plan: Plan = {
    schemaVersion: PLAN_SCHEMA_VERSION,
    tenant: input.tenant,
    source: input.source,
    generatedAt: new Date(input.now).toISOString(),
    deprovisionAction: config.deprovision.action,
    users: { create, update, reactivate, deactivate, delete: del },
    groups: { create: gCreate, update: gUpdate, delete: gDelete },
    memberships,
    skipped,
    rejected: desired.rejected,
    guard,
    sourceStats: { ...desired.stats, sourceUsers: desired.users.length, sourceGroups: desired.groups.length, inScopeUsers: scopedUsers.length, inScopeGroups: scopedGroups.length },
    summary: emptySummary(),
  };
  plan.summary = summarize(plan);
  return plan;
}

function resolveMembers(
  g: NormalizedGroup,
  userIdByExt: Map<string, string | undefined>,
  userNameByExt: Map<string, string>,
  skipped: Skipped[],
  sourceNameByExt: ReadonlyMap<string, string>,
): MemberRef[] {
  const out: MemberRef[] = [];
  const seen = new Set<string>();
  for (const ext of g.members) {
    if (seen.has(ext)) continue;
    seen.add(ext);
    if (!userIdByExt.has(ext)) {
      skipped.push({ kind: 'member', ref: `${g.displayName} ← ${sourceNameByExt.get(ext) ?? ext}`, reason: 'member is not a provisioned user (unknown, out of scope, inactive or unmanaged)' });
      continue;
    }
    out.push({ externalId: ext, userName: userNameByExt.get(ext), id: userIdByExt.get(ext) });
  }
  return out;
}

function memberRefForId(id: string, usersById: Map<string, ScimUser>, ledger: Ledger): MemberRef {
  const u = usersById.get(id);
  return { id, externalId: u?.externalId ?? ledger.get('user', id)?.externalId, userName: u?.userName };
}

function indexBy<T>(items: T[], key: (t: T) => string | undefined): Map<string, T> {
  const m = new Map<string, T>();
  for (const it of items) {
    const k = key(it);
    if (k !== undefined && k !== '' && !m.has(k)) m.set(k, it);
  }
  return m;
}

function emptySummary(): PlanSummary {
  return { usersCreate: 0, usersUpdate: 0, usersReactivate: 0, usersDeactivate: 0, usersDelete: 0, groupsCreate: 0, groupsUpdate: 0, groupsDelete: 0, membersAdd: 0, membersRemove: 0, skipped: 0, rejected: 0, changes: 0 };
}

export function summarize(plan: Plan): PlanSummary {
  const s: PlanSummary = {
    usersCreate: plan.users.create.length,
    usersUpdate: plan.users.update.length,
    usersReactivate: plan.users.reactivate.length,
    usersDeactivate: plan.users.deactivate.length,
    usersDelete: plan.users.delete.length,
    groupsCreate: plan.groups.create.length,
    groupsUpdate: plan.groups.update.length,
    groupsDelete: plan.groups.delete.length,
    membersAdd: plan.memberships.reduce((n, m) => n + m.add.length, 0),
    membersRemove: plan.memberships.reduce((n, m) => n + m.remove.length, 0),
    skipped: plan.skipped.length,
    rejected: plan.rejected.length,
    changes: 0,
  };
  s.changes = s.usersCreate + s.usersUpdate + s.usersReactivate + s.usersDeactivate + s.usersDelete + s.groupsCreate + s.groupsUpdate + s.groupsDelete + s.membersAdd + s.membersRemove;
  return s;
}
