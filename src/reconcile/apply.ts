/**
 * Executes a plan with bounded concurrency and an optional requests-per-second cap, in the
 * order users created/updated → groups created/updated → memberships → groups deleted →
 * users deactivated/deleted. One failed object is recorded with its reason and never stops
 * the others; only a fatal error (bad credential) aborts what is left.
 */
import PQueue from 'p-queue';
import { isSyncError } from '../platform/errors.ts';
import type { Ledger, LedgerStore } from './ledger.ts';
import type { MemberRef, Plan } from './plan-types.ts';
import type { ScimTarget } from './target.ts';

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
  | 'group.members';

export interface AppliedChange {
  action: ChangeAction;
  result: 'ok' | 'failed';
  id?: string;
  externalId?: string;
  /** userName or group displayName, for the operator's audit trail. */
  name?: string;
  added?: number;
  removed?: number;
  code?: string;
  message?: string;
}

export interface ApplyFailure {
  action: ChangeAction;
  ref: string;
  code: string;
  message: string;
}

export interface ApplyProgress {
  phase: string;
  done: number;
  total: number;
  failed: number;
}

export interface ApplyOptions {
  concurrency: number;
  requestsPerSecond: number;
  signal?: AbortSignal;
  now?: () => number;
  onProgress?: (p: ApplyProgress) => void;
  /** One call per applied change: the sync's own audit trail. */
  onChange?: (c: AppliedChange) => void;
}

export interface ApplyResult {
  succeeded: Partial<Record<ChangeAction, number>>;
  membersAdded: number;
  membersRemoved: number;
  failed: ApplyFailure[];
  /** Destructive operations not run because the guard tripped. */
  held: { usersDeactivate: number; usersDelete: number; groupsDelete: number; membersRemove: number };
  /** Set when a fatal error stopped the run early. */
  aborted?: string;
  durationMs: number;
}

export interface ApplyDeps {
  target: ScimTarget;
  ledger: Ledger;
  ledgerStore: LedgerStore;
}

export async function applyPlan(plan: Plan, deps: ApplyDeps, opts: ApplyOptions): Promise<ApplyResult> {
  const started = performance.now();
  const now = opts.now ?? Date.now;
  const { target, ledger } = deps;
  const held = plan.guard.tripped;
  const result: ApplyResult = {
    succeeded: {},
    membersAdded: 0,
    membersRemoved: 0,
    failed: [],
    held: held
      ? {
          usersDeactivate: plan.users.deactivate.length,
          usersDelete: plan.users.delete.length,
          groupsDelete: plan.groups.delete.length,
          membersRemove: plan.summary.membersRemove,
        }
      : { usersDeactivate: 0, usersDelete: 0, groupsDelete: 0, membersRemove: 0 },
    durationMs: 0,
  };
  const queue = new PQueue({
    concurrency: opts.concurrency,
    ...(opts.requestsPerSecond > 0 ? { intervalCap: Math.max(1, Math.floor(opts.requestsPerSecond)), interval: 1000 } : {}),
  });
  const progress: ApplyProgress = { phase: 'start', done: 0, total: countTasks(plan, held), failed: 0 };
  const report = (): void => opts.onProgress?.({ ...progress });

  const run = (action: ChangeAction, ref: { id?: string; externalId?: string; name: string }, fn: () => Promise<Partial<AppliedChange> | void>): void => {
    void queue.add(async () => {
      if (result.aborted !== undefined || opts.signal?.aborted) return;
      try {
        const extra = (await fn()) ?? {};
        result.succeeded[extra.action ?? action] = (result.succeeded[extra.action ?? action] ?? 0) + 1;
        opts.onChange?.({ action, result: 'ok', ...pick(ref), ...extra });
      } catch (e) {
        const code = isSyncError(e) ? e.code : 'E_UNEXPECTED';
        const message = e instanceof Error ? e.message : String(e);
        result.failed.push({ action, ref: ref.name, code, message });
        progress.failed++;
        opts.onChange?.({ action, result: 'failed', ...pick(ref), code, message });
        if (isSyncError(e) && e.kind === 'fatal') {
          result.aborted = message;
          queue.clear();
        }
      } finally {
        progress.done++;
        report();
      }
    });
  };

  const phase = async (name: string, enqueue: () => void): Promise<void> => {
    if (result.aborted !== undefined || opts.signal?.aborted) return;
    progress.phase = name;
    report();
    enqueue();
    await queue.onIdle();
    if (ledger.isDirty) await ledger.save(deps.ledgerStore);
  };

  const userIds = new Map<string, string>();
  const groupIds = new Map<string, string>();

  try {
    // Write-ahead: creates are pending before they are sent, so a crash cannot orphan them.
    for (const c of plan.users.create) ledger.markPending('user', c.externalId);
    for (const c of plan.groups.create) ledger.markPending('group', c.externalId);
    if (ledger.isDirty) await ledger.save(deps.ledgerStore);

    await phase('users', () => {
      for (const c of plan.users.create) {
        run('user.create', { externalId: c.externalId, name: c.userName }, async () => {
          const { resource, adopted } = await target.createUser(c.resource);
          ledger.record('user', resource.id, c.externalId);
          userIds.set(c.externalId, resource.id);
          return { id: resource.id, ...(adopted ? { action: 'user.adopt' as const } : {}) };
        });
      }
      const updates = [
        ...plan.users.update.map((u) => ({ u, action: (u.adopt && u.ops.length === 0 ? 'user.adopt' : 'user.update') as ChangeAction })),
        ...plan.users.reactivate.map((u) => ({ u, action: 'user.reactivate' as ChangeAction })),
      ];
      for (const { u, action } of updates) {
        run(action, { id: u.id, externalId: u.externalId, name: u.userName }, async () => {
          if (u.ops.length > 0) await target.patch('Users', u.id, u.ops);
          ledger.record('user', u.id, u.externalId);
          if (action === 'user.reactivate') ledger.setDeactivated(u.id, undefined);
        });
      }
    });

    await phase('groups', () => {
      for (const c of plan.groups.create) {
        run('group.create', { externalId: c.externalId, name: c.displayName }, async () => {
          const { resource, adopted } = await target.createGroup(c.resource);
          ledger.record('group', resource.id, c.externalId);
          groupIds.set(c.externalId, resource.id);
          return { id: resource.id, ...(adopted ? { action: 'group.adopt' as const } : {}) };
        });
      }
      for (const g of plan.groups.update) {
        run(g.adopt && g.ops.length === 0 ? 'group.adopt' : 'group.update', { id: g.id, externalId: g.externalId, name: g.displayName }, async () => {
          if (g.ops.length > 0) await target.patch('Groups', g.id, g.ops);
          ledger.record('group', g.id, g.externalId);
        });
      }
    });

    await phase('memberships', () => {
      for (const m of plan.memberships) {
        const remove = held ? [] : m.remove;
        if (m.add.length === 0 && remove.length === 0) continue;
        run('group.members', { ...(m.group.id ? { id: m.group.id } : {}), externalId: m.group.externalId, name: m.group.displayName }, async () => {
          const groupId = m.group.id ?? groupIds.get(m.group.externalId);
          if (groupId === undefined) throw new Error(`group ${m.group.displayName} was not created, memberships not applied`);
          const add = resolveIds(m.add, userIds);
          const rem = resolveIds(remove, userIds);
          await target.patchMembers(groupId, add.ids, rem.ids);
          result.membersAdded += add.ids.length;
          result.membersRemoved += rem.ids.length;
          if (add.missing.length > 0) {
            throw new Error(`${add.missing.length} member(s) not added because their user was not created: ${add.missing.slice(0, 5).join(', ')}`);
          }
          return { id: groupId, added: add.ids.length, removed: rem.ids.length };
        });
      }
    });

    if (!held) {
      await phase('group-deletes', () => {
        for (const g of plan.groups.delete) {
          run('group.delete', { id: g.id, externalId: g.externalId, name: g.displayName }, async () => {
            await target.delete('Groups', g.id);
            ledger.forget('group', g.id);
          });
        }
      });
      await phase('user-removals', () => {
        for (const u of plan.users.deactivate) {
          run('user.deactivate', { id: u.id, externalId: u.externalId, name: u.userName }, async () => {
            await target.patch('Users', u.id, [{ op: 'replace', path: 'active', value: false }]);
            if (!ledger.has('user', u.id)) ledger.record('user', u.id, u.externalId);
            ledger.setDeactivated(u.id, now());
          });
        }
        for (const u of plan.users.delete) {
          run('user.delete', { id: u.id, externalId: u.externalId, name: u.userName }, async () => {
            await target.delete('Users', u.id);
            ledger.forget('user', u.id);
          });
        }
      });
    }
  } finally {
    await queue.onIdle();
    if (ledger.isDirty) await ledger.save(deps.ledgerStore);
    result.durationMs = performance.now() - started;
  }
  return result;
}

function resolveIds(refs: MemberRef[], created: Map<string, string>): { ids: string[]; missing: string[] } {
  const ids: string[] = [];
  const missing: string[] = [];
  for (const r of refs) {
    const id = r.id ?? (r.externalId !== undefined ? created.get(r.externalId) : undefined);
    if (id !== undefined) ids.push(id);
    else missing.push(r.userName ?? r.externalId ?? '?');
  }
  return { ids, missing };
}

function pick(ref: { id?: string; externalId?: string; name: string }): Partial<AppliedChange> {
  return { ...(ref.id ? { id: ref.id } : {}), ...(ref.externalId ? { externalId: ref.externalId } : {}), name: ref.name };
}

function countTasks(plan: Plan, held: boolean): number {
  const base = plan.users.create.length + plan.users.update.length + plan.users.reactivate.length + plan.groups.create.length + plan.groups.update.length;
  const members = plan.memberships.filter((m) => m.add.length > 0 || (!held && m.remove.length > 0)).length;
  const destructive = held ? 0 : plan.groups.delete.length + plan.users.deactivate.length + plan.users.delete.length;
  return base + members + destructive;
}
