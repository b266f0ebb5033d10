/**
 * The groups part of a plan: creates, updates (renames with their temporary step) and
 * deletions, from the global match (match.ts). Memberships are planned in plan-members.ts.
 * Pure.
 */
import { isUnidentified, type NormalizedGroup } from '../identity/model.ts';
import { mapGroup } from '../identity/mapping.ts';
import { compileScope } from '../identity/scope.ts';
import type { ScimGroup } from '../platform/scim/types.ts';
import { diffAttributes } from './compare.ts';
import { matchObjects, type MatchResult } from './match.ts';
import { groupRejections, isAdopting, isManaged, withoutPath, type PlanContext } from './plan-context.ts';
import type { GroupCreate, GroupDelete, GroupUpdate } from './plan-types.ts';
import { planRenames, tempGroupName } from './renames.ts';

export interface GroupPlan {
  create: GroupCreate[];
  update: GroupUpdate[];
  delete: GroupDelete[];
  match: MatchResult<ScimGroup>;
  /** In-scope source groups whose memberships are planned: the platform group, or undefined when created. */
  compared: Array<{ source: NormalizedGroup; platform: ScimGroup | undefined }>;
  inScope: number;
}

/**
 * `deletesFreeNames`: a group this run deletes gives up its displayName to a rename or create
 * of the same run (the delete is marked `freesName` and applied first, see tasks.ts). The
 * planner asks for it only when the guard lets the deletes run (planner.ts).
 */
export function planGroups(ctx: PlanContext, opts: { deletesFreeNames: boolean } = { deletesFreeNames: true }): GroupPlan {
  const { input, config, ledger, skipped } = ctx;
  const scope = compileScope<NormalizedGroup>(config.scope.groups, 'provisioning.scope.groups');
  const match = matchObjects<NormalizedGroup, ScimGroup>({
    kind: 'group',
    source: input.desired.groups,
    extOf: (g) => g.externalId,
    nameOf: (g) => g.displayName,
    platform: input.platformGroups,
    platformNameOf: (p) => p.displayName,
    ledger,
    rejected: groupRejections(input.desired.rejected).filter((r) => !isUnidentified(r)),
    rejectedNameOf: (r) => r.displayName,
  });
  const out: GroupPlan = { create: [], update: [], delete: [], match, compared: [], inScope: 0 };
  const deletes = config.deprovision.deleteGroups && config.deprovision.action !== 'none';
  const toCreate: Array<{ create: GroupCreate; source: NormalizedGroup }> = [];

  for (const g of input.desired.groups) {
    const inScope = scope(g);
    if (inScope) out.inScope++;
    const hit = match.matched.get(g.externalId);
    if (!hit) {
      if (inScope)
        toCreate.push({
          create: { externalId: g.externalId, displayName: g.displayName, resource: mapGroup(g, config.mapping.group).resource },
          source: g,
        });
      continue;
    }
    const p = hit.platform;
    const managed = isManaged(ctx, 'group', p, g.externalId);
    if (!inScope) {
      if (managed && deletes) out.delete.push({ id: p.id, externalId: g.externalId, displayName: p.displayName });
      continue;
    }
    if (!managed && !config.matching.adoptExisting) {
      skipped.push({
        kind: 'group',
        ref: g.displayName,
        reason: 'exists on the platform but is not managed by this tool (set provisioning.matching.adoptExisting: true to take it over)',
        code: 'unmanaged',
      });
      continue;
    }
    const want = mapGroup(g, config.mapping.group);
    const adopt = isAdopting(ctx, 'group', p, g.externalId, managed);
    const { changes, ops } = diffAttributes(want.resource as Record<string, unknown>, p as Record<string, unknown>, want.managedPaths);
    if (changes.length > 0 || adopt)
      out.update.push({ id: p.id, externalId: g.externalId, displayName: p.displayName, changes, ops, adopt });
    out.compared.push({ source: g, platform: p });
  }

  for (const p of input.platformGroups) {
    if (match.claimedBy.has(p.id) || !isManaged(ctx, 'group', p)) continue;
    const externalId = p.externalId ?? ledger.get('group', p.id)?.externalId ?? '';
    const rejection = match.protectedBy.get(p.id);
    if (rejection) {
      ctx.protected.push({
        kind: 'group',
        id: p.id,
        name: p.displayName,
        externalId: externalId || undefined,
        rejection: rejection.ref,
        held: 'not deleted and its members not changed: its source entry was rejected',
      });
      continue;
    }
    const owner = match.duplicates.get(p.id);
    if (owner !== undefined) {
      skipped.push({
        kind: 'group',
        ref: p.displayName,
        reason: `a second platform group of source group ${owner}: left alone, resolve it by hand`,
      });
      continue;
    }
    if (deletes) out.delete.push({ id: p.id, externalId, displayName: p.displayName });
  }
  const wanted = new Map(input.desired.groups.map((g) => [g.externalId, g.displayName]));
  const renaming = out.update.filter((u) => u.changes.some((c) => c.path === 'displayName'));
  // A group this run deletes does not hold its name against a rename or create of the same run;
  // a delete whose name one of them takes is marked to run first.
  const renames = planRenames(
    renaming.map((u) => ({ id: u.id, to: wanted.get(u.externalId) ?? u.displayName })),
    toCreate.map((c) => ({ ext: c.create.externalId, name: c.create.displayName })),
    (name) => match.byName.get(name),
    tempGroupName,
    new Set(opts.deletesFreeNames ? out.delete.map((d) => d.id) : []),
  );
  for (const d of out.delete) if (renames.freedTaken.has(d.id)) d.freesName = true;
  for (const u of renaming) {
    const via = renames.via.get(u.id);
    if (via !== undefined) u.renameVia = via;
    const holder = renames.blockedRenames.get(u.id);
    if (holder === undefined) continue;
    skipped.push({
      kind: 'group',
      ref: u.displayName,
      reason: `displayName change to ${wanted.get(u.externalId) ?? ''} not applied: ${describeHolder(holder.id, input.platformGroups, match, out.delete)}`,
    });
    Object.assign(u, withoutPath(u.changes, u.ops, 'displayName'));
  }
  out.update = out.update.filter((u) => u.changes.length > 0 || u.adopt);
  for (const c of toCreate) {
    const holder = renames.blockedCreates.get(c.create.externalId);
    if (holder !== undefined) {
      skipped.push({
        kind: 'group',
        ref: c.create.displayName,
        reason: `not created: the displayName is held by ${describeHolder(holder.id, input.platformGroups, match, out.delete)}`,
      });
      continue;
    }
    out.create.push(c.create);
    out.compared.push({ source: c.source, platform: undefined });
  }
  return out;
}

function describeHolder(id: string, groups: ScimGroup[], match: MatchResult<ScimGroup>, deletes: GroupDelete[]): string {
  const who = `platform group ${id} (${groups.find((g) => g.id === id)?.displayName ?? '?'})`;
  if (deletes.some((d) => d.id === id)) return `${who}, whose deletion the guard holds: it follows the approved deletion`;
  const owner = match.claimedBy.get(id);
  if (owner !== undefined) return `${who}, the group of source group ${owner}, which keeps it`;
  const rejection = match.protectedBy.get(id);
  if (rejection !== undefined) return `${who}, kept for the rejected source entry ${rejection.ref}`;
  return `${who}, which this run does not rename`;
}
