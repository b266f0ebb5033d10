/**
 * A plan as ordered phases of self-contained, serializable tasks. The one-shot CLI runs
 * them in-process (apply.ts); the daemon stores them in Redis and fans chunks out to child
 * jobs on any replica. Every task is safe to run twice: creates adopt on 409, PATCH
 * replaces, member adds are idempotent, deletes treat 404 as done.
 */
import type { NewResource, PatchOperation, ScimGroup, ScimUser } from '../platform/scim/types.ts';
import { ErrorCodes, isSyncError, SyncError } from '../errors.ts';
import type { LedgerWriter } from './ledger.ts';
import type { MemberRef, Plan } from './plan-types.ts';
import type { ScimTarget } from './target.ts';
import { withoutHeldHandovers } from './handover.ts';
import type { UserAttributeTarget } from '../platform/user-attributes.ts';
import { attributePhases, executeAttributeTask } from './attributes/tasks.ts';
import type { AttributeTask } from './attributes/types.ts';

export type ChangeAction =
  | 'user.create'
  | 'user.adopt'
  | 'user.update'
  | 'user.reactivate'
  | 'user.deactivate'
  | 'user.delete'
  | 'group.create'
  | 'group.adopt'
  | 'group.update'
  | 'group.delete'
  | 'group.members'
  // user attributes
  | 'user.attributes'
  | 'attribute.create'
  | 'attribute.update';

export type ApplyTask =
  | { action: 'user.create'; externalId: string; name: string; resource: NewResource<ScimUser> }
  | { action: 'user.update' | 'user.adopt' | 'user.reactivate'; id: string; externalId: string; name: string; ops: PatchOperation[] }
  | { action: 'group.create'; externalId: string; name: string; resource: NewResource<ScimGroup> }
  | { action: 'group.update' | 'group.adopt'; id: string; externalId: string; name: string; ops: PatchOperation[] }
  | { action: 'group.members'; id: string | undefined; externalId: string; name: string; add: MemberRef[]; remove: MemberRef[] }
  | { action: 'group.delete' | 'user.deactivate' | 'user.delete'; id: string; externalId: string; name: string }
  | AttributeTask;

export type PhaseName =
  | 'renames'
  | 'users'
  | 'attribute-definitions'
  | 'attribute-values'
  | 'groups'
  | 'memberships'
  | 'name-deletes'
  | 'group-deletes'
  | 'user-removals';

export interface Phase {
  name: PhaseName;
  tasks: ApplyTask[];
}

/** What one applied task reports: the sync's own audit trail. */
export interface AppliedChange {
  action: ChangeAction;
  result: 'ok' | 'failed';
  id?: string;
  externalId?: string;
  /** userName or group displayName. */
  name?: string;
  added?: number;
  removed?: number;
  code?: string;
  message?: string;
}

/**
 * A task that did part of its work before failing: what was done is counted (`applied`),
 * the rest is reported as the failure.
 */
export class PartialTaskError extends SyncError {
  readonly applied: Omit<AppliedChange, 'result'>;
  constructor(applied: Omit<AppliedChange, 'result'>, message: string) {
    super(ErrorCodes.NOT_FOUND, 'not_found', message);
    this.applied = applied;
  }
}

export function isPartialTaskError(e: unknown): e is PartialTaskError {
  return e instanceof PartialTaskError;
}

/**
 * Phases in apply order; destructive ones are left out when the guard holds them.
 * `name-deletes` (only when a rename or create takes the userName of a user or the
 * displayName of a group this run deletes) and `renames` (only when a plan has swaps or cycles: the temporary names,
 * renameVia) come first, so the final names written in `users` and `groups` are all free.
 */
export function planPhases(plan: Plan): Phase[] {
  const held = plan.guard.tripped;
  const renames: ApplyTask[] = [
    ...[...plan.users.update, ...plan.users.reactivate]
      .filter((u) => u.renameVia !== undefined)
      .map(
        (u): ApplyTask => ({
          action: 'user.update',
          id: u.id,
          externalId: u.externalId,
          name: u.userName,
          ops: [{ op: 'replace', path: 'userName', value: u.renameVia }],
        }),
      ),
    ...plan.groups.update
      .filter((g) => g.renameVia !== undefined)
      .map(
        (g): ApplyTask => ({
          action: 'group.update',
          id: g.id,
          externalId: g.externalId,
          name: g.displayName,
          ops: [{ op: 'replace', path: 'displayName', value: g.renameVia }],
        }),
      ),
  ];
  const users: ApplyTask[] = [
    ...plan.users.create.map(
      (c): ApplyTask => ({ action: 'user.create', externalId: c.externalId, name: c.userName, resource: c.resource }),
    ),
    ...plan.users.update.map(
      (u): ApplyTask => ({
        action: u.adopt && u.ops.length === 0 ? 'user.adopt' : 'user.update',
        id: u.id,
        externalId: u.externalId,
        name: u.userName,
        ops: u.ops,
      }),
    ),
    ...plan.users.reactivate.map(
      (u): ApplyTask => ({ action: 'user.reactivate', id: u.id, externalId: u.externalId, name: u.userName, ops: u.ops }),
    ),
  ];
  const groups: ApplyTask[] = [
    ...plan.groups.create.map(
      (c): ApplyTask => ({ action: 'group.create', externalId: c.externalId, name: c.displayName, resource: c.resource }),
    ),
    ...plan.groups.update.map(
      (g): ApplyTask => ({
        action: g.adopt && g.ops.length === 0 ? 'group.adopt' : 'group.update',
        id: g.id,
        externalId: g.externalId,
        name: g.displayName,
        ops: g.ops,
      }),
    ),
  ];
  const memberships: ApplyTask[] = plan.memberships
    .map(
      (m): ApplyTask => ({
        action: 'group.members',
        id: m.group.id,
        externalId: m.group.externalId,
        name: m.group.displayName,
        add: m.add,
        remove: held ? [] : m.remove,
      }),
    )
    .filter((t) => t.action === 'group.members' && (t.add.length > 0 || t.remove.length > 0));
  const groupDelete = (g: Plan['groups']['delete'][number]): ApplyTask => ({
    action: 'group.delete',
    id: g.id,
    externalId: g.externalId,
    name: g.displayName,
  });
  const userDelete = (u: Plan['users']['delete'][number]): ApplyTask => ({
    action: 'user.delete',
    id: u.id,
    externalId: u.externalId,
    name: u.userName,
  });
  const nameDeletes = held
    ? []
    : [...plan.users.delete.filter((u) => u.freesName).map(userDelete), ...plan.groups.delete.filter((g) => g.freesName).map(groupDelete)];
  const phases: Phase[] = [
    ...(nameDeletes.length > 0 ? [{ name: 'name-deletes' as const, tasks: nameDeletes }] : []),
    ...(renames.length > 0 ? [{ name: 'renames' as const, tasks: renames }] : []),
    { name: 'users', tasks: users },
    ...attributePhases(plan), // after the user exists, before group memberships
    { name: 'groups', tasks: groups },
    { name: 'memberships', tasks: memberships },
  ];
  // While the guard holds the plan, a handover is held whole (handover.ts).
  if (held) return withoutHeldHandovers(plan, phases);
  phases.push({
    name: 'group-deletes',
    tasks: plan.groups.delete.filter((g) => !g.freesName).map(groupDelete),
  });
  phases.push({
    name: 'user-removals',
    tasks: [
      ...plan.users.deactivate.map((u): ApplyTask => ({ action: 'user.deactivate', id: u.id, externalId: u.externalId, name: u.userName })),
      ...plan.users.delete.filter((u) => !u.freesName).map(userDelete),
    ],
  });
  return phases;
}

export interface TaskDeps {
  target: ScimTarget;
  /** provisioning.matching.adoptExisting: may a create that meets an unmanaged object take it over? */
  adoptExisting: boolean;
  ledger: LedgerWriter;
  now: () => number;
  /** The platform's user-attribute API (when user attributes are configured). */
  attributes?: UserAttributeTarget | undefined;
}

/** Runs one task; returns what to report on success, throws a classified error on failure. */
export async function executeTask(task: ApplyTask, deps: TaskDeps): Promise<Omit<AppliedChange, 'result'>> {
  const { target, ledger } = deps;
  const base = { action: task.action, externalId: task.externalId, name: task.name };
  switch (task.action) {
    // user attributes
    case 'user.attributes':
    case 'attribute.create':
    case 'attribute.update':
      return executeAttributeTask(task, { attributes: deps.attributes, ledger, now: deps.now });
    case 'user.create': {
      const { resource, adopted } = await target.createUser(task.resource);
      if (adopted) await refuseForeign(resource, task, deps);
      await ledger.record('user', resource.id, task.externalId);
      return { ...base, id: resource.id, ...(adopted ? { action: 'user.adopt' as const } : {}) };
    }
    case 'group.create': {
      const { resource, adopted } = await target.createGroup(task.resource);
      if (adopted) await refuseForeign(resource, task, deps);
      await ledger.record('group', resource.id, task.externalId);
      return { ...base, id: resource.id, ...(adopted ? { action: 'group.adopt' as const } : {}) };
    }
    case 'user.update':
    case 'user.adopt':
    case 'user.reactivate': {
      if (task.ops.length > 0) await target.patch('Users', task.id, task.ops);
      await ledger.record('user', task.id, task.externalId);
      if (task.action === 'user.reactivate') await ledger.setDeactivated(task.id, undefined);
      return { ...base, id: task.id };
    }
    case 'group.update':
    case 'group.adopt': {
      if (task.ops.length > 0) await target.patch('Groups', task.id, task.ops);
      await ledger.record('group', task.id, task.externalId);
      return { ...base, id: task.id };
    }
    case 'group.members': {
      const groupId = task.id ?? (await ledger.idFor('group', task.externalId));
      if (groupId === undefined) throw new Error(`group ${task.name} was not created, so its members were not applied`);
      const add = await resolveIds(task.add, ledger);
      const remove = await resolveIds(task.remove, ledger);
      await target.patchMembers(groupId, add.ids, remove.ids);
      await ledger.noteMemberRemovals?.(groupId, remove.ids, deps.now());
      const done = { ...base, id: groupId, added: add.ids.length, removed: remove.ids.length };
      if (add.missing.length > 0) {
        throw new PartialTaskError(
          done,
          `${add.missing.length} member(s) not added because their user was not created: ${add.missing.slice(0, 5).join(', ')}`,
        );
      }
      return done;
    }
    case 'group.delete':
      await target.delete('Groups', task.id);
      await ledger.forget('group', task.id);
      return { ...base, id: task.id };
    case 'user.deactivate':
      // Write-ahead: the time is recorded before the PATCH, so a crash right after it cannot
      // lose the grace period of deleteAfterDays. A PATCH refused for good takes it back.
      if (!(await ledger.has('user', task.id))) await ledger.record('user', task.id, task.externalId);
      await ledger.setDeactivated(task.id, deps.now());
      try {
        await target.patch('Users', task.id, [{ op: 'replace', path: 'active', value: false }]);
      } catch (e) {
        if (isSyncError(e) && e.kind !== 'transient') await ledger.setDeactivated(task.id, undefined);
        throw e;
      }
      return { ...base, id: task.id };
    case 'user.delete':
      await target.delete('Users', task.id);
      await ledger.forget('user', task.id);
      return { ...base, id: task.id };
  }
}

/**
 * A create that found an existing object (409, or created meanwhile by someone else) only
 * takes it over when it carries our externalId — then it is ours from an earlier attempt —
 * or when adoption is enabled. Otherwise it is someone else's object: fail, don't adopt.
 * An object we already manage for another source person (e.g. their rename to free this
 * name has not been applied yet) is never taken over, adoption or not: an account never
 * passes from one person to another.
 */
async function refuseForeign(
  resource: { id: string; externalId?: string },
  task: { action: ChangeAction; externalId: string; name: string },
  deps: TaskDeps,
): Promise<void> {
  if (resource.externalId === task.externalId) return;
  const noun = task.action === 'user.create' ? 'user' : 'group';
  // Never, even with adoptExisting: an account this tool manages for someone else stays theirs.
  if (await deps.ledger.has(noun, resource.id)) {
    throw new SyncError(
      ErrorCodes.CONFLICT,
      'conflict',
      `create ${noun} ${task.name}: the name is held by ${noun} ${resource.id}, which this tool manages for another source object; not taken over`,
    );
  }
  // Nor an object carrying another person's externalId: adoption is for objects no one owns.
  if (noun === 'user' && typeof resource.externalId === 'string' && resource.externalId !== '') {
    throw new SyncError(
      ErrorCodes.CONFLICT,
      'conflict',
      `create user ${task.name}: the name is held by user ${resource.id}, the account of ${resource.externalId}; an account never passes from one person to another (see the plan's conflicts and scim-audit-sync ledger reassign)`,
    );
  }
  if (deps.adoptExisting) return;
  throw new SyncError(
    ErrorCodes.CONFLICT,
    'conflict',
    `create ${noun} ${task.name}: an unmanaged ${noun} with this name already exists on the platform (id ${resource.id}); set provisioning.matching.adoptExisting: true to take it over`,
  );
}

async function resolveIds(refs: MemberRef[], ledger: LedgerWriter): Promise<{ ids: string[]; missing: string[] }> {
  const ids: string[] = [];
  const missing: string[] = [];
  for (const r of refs) {
    const id = r.id ?? (r.externalId !== undefined ? await ledger.idFor('user', r.externalId) : undefined);
    if (id !== undefined) ids.push(id);
    else missing.push(r.userName ?? r.externalId ?? '?');
  }
  return { ids, missing };
}

/** Tasks a change counts as, for progress: a membership task counts once. */
export function countTasks(phases: Phase[]): number {
  return phases.reduce((n, p) => n + p.tasks.length, 0);
}
