/**
 * The real side of the model-based test: the platform simulator over a socket, a workspace
 * with the file source, and the in-process engine (plan → apply → plan). After every step
 * `sync()` checks the promises docs/reconcile.md makes, against the model:
 *
 * - converged: every kept person has exactly one account with their externalId, exact
 *   userName, names and active flag; every source group exists with its exact displayName
 *   and holds the accounts of the kept people it lists;
 * - idempotent: the plan after apply is empty;
 * - no unmanaged object written: admin-created accounts keep every attribute;
 * - an account never passes from one person to another, whether either is in the source or
 *   not: its externalId never changes, the plan never writes one person's id onto another's
 *   account, and a newcomer given the name of an absent person's account is an identity
 *   conflict (listed in the plan), never a takeover;
 * - leavers' accounts are deactivated (`deprovision.action: deactivate`) or deleted (`delete`:
 *   a returner then gets a new account);
 * - nothing present in the source (kept or rejected) is deprovisioned, deleted or removed
 *   from a group it is in;
 * - the guard trips exactly when the deactivations the model expects exceed the limit, and
 *   nothing destructive runs while it holds.
 */
import { nameKey, nfc } from '../../../src/identity/canonical-name.ts';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { ScimGroup, ScimUser } from '../../../src/platform/scim/types.ts';
import type { Plan } from '../../../src/reconcile/plan-types.ts';
import type { ListPageEvent, Simulator } from '../../../src/simulator/index.ts';
import type { Workspace } from '../../helpers/reconcile-harness.ts';
import type { DirectoryModel, Person } from './directory-model.ts';

export const MAX_DELETES = 2;
export const MAX_DELETE_PERCENT = 50;
export const MAX_MEMBER_REMOVALS = 3;

export interface AdminAccount {
  id: string;
  userName: string;
  givenName: string | undefined;
  active: boolean;
}

export interface Snapshot {
  users: Map<string, ScimUser>;
  groups: Map<string, ScimGroup>;
}

export class ModelViolation extends Error {
  override name = 'ModelViolation';
}

function fail(msg: string, model: DirectoryModel, plan?: Plan): never {
  const planText = plan
    ? `\nplan summary: ${JSON.stringify(plan.summary)}\nguard: ${JSON.stringify(plan.guard.reasons)}\nskipped: ${JSON.stringify(plan.skipped)}`
    : '';
  throw new ModelViolation(`${msg}\nmodel: ${model.describe()}${planText}`);
}

export class RealSystem {
  /** platform user id → externalId it had when last seen (accounts this tool owns). */
  private readonly owner = new Map<string, string>();
  /** platform group id → externalId (groups this tool owns). */
  private readonly groupOwner = new Map<string, string>();
  /** Accounts an admin created by hand: never to be written. */
  readonly admin = new Map<string, AdminAccount>();
  /** Set by a step that breaks the source for one run (it returns no users). */
  outage = false;
  /** Set by the simulator's page hook when an admin deleted this managed account between two listing pages. */
  churned: string | undefined;
  /** Armed by a step: runs once, between the first and second page of the next full user listing. */
  private pageHook: ((e: ListPageEvent) => void) | undefined;

  readonly sim: Simulator;
  readonly ws: Workspace;
  readonly ownership: 'ledger' | 'externalId';
  readonly deprovision: 'deactivate' | 'delete';

  constructor(sim: Simulator, ws: Workspace, ownership: 'ledger' | 'externalId', deprovision: 'deactivate' | 'delete' = 'deactivate') {
    this.sim = sim;
    this.ws = ws;
    this.ownership = ownership;
    this.deprovision = deprovision;
  }

  snapshot(): Snapshot {
    const users = new Map(this.sim.store.users().map((u) => [u.id, structuredClone(u)]));
    const groups = new Map(this.sim.store.groups().map((g) => [g.id, structuredClone(g)]));
    return { users, groups };
  }

  accountOf(ext: string): ScimUser[] {
    return this.sim.store.users().filter((u) => u.externalId === ext);
  }

  /** For the simulator's afterListPage option. */
  readonly onListPage = (e: ListPageEvent): void => {
    if (e.resourceType !== 'Users' || e.filter !== undefined || e.startIndex !== 1 || e.returned >= e.totalResults) return;
    const hook = this.pageHook;
    this.pageHook = undefined;
    hook?.(e);
  };

  /** While the next plan lists the users: delete `victim` (a managed account) and create an admin account named `userName`. */
  armChurn(victim: string, userName: string): void {
    this.pageHook = (e) => {
      e.store.deleteUser(victim);
      this.churned = victim;
      const u = e.store.createUser({ userName, name: { givenName: 'Hand', familyName: 'Made' }, active: true });
      this.admin.set(u.id, { id: u.id, userName, givenName: 'Hand', active: true });
    };
  }

  loseLedger(): void {
    rmSync(join(this.ws.dir, 'state'), { recursive: true, force: true });
  }

  /** One reconcile cycle for the model's current directory, with every invariant checked. */
  async sync(model: DirectoryModel): Promise<void> {
    this.ws.writeDirectory(model.toDirectory({ outage: this.outage }));
    const before = this.snapshot();
    const plan = await this.ws.planInProcess();
    // During an outage the plan shows everyone gone; the guard must hold it (checked below).
    if (!this.outage) this.checkPlan(model, before, plan);

    const removals = this.outage ? { deactivate: 0, delete: 0 } : this.expectedRemovals(model, before);
    const expectDeactivate = removals.deactivate;
    const expectUserDeletes = removals.delete;
    const expectGroupDeletes = this.outage ? 0 : this.expectedGroupDeletes(model, before);
    const expectDestructive = expectDeactivate + expectUserDeletes + expectGroupDeletes;
    if (this.outage) {
      if (!plan.guard.tripped) fail('a source that returned no users did not trip the guard', model, plan);
      const { result } = await this.ws.applyInProcess();
      const removed = (result.succeeded['user.deactivate'] ?? 0) + (result.succeeded['user.delete'] ?? 0);
      if (removed > 0 || result.membersRemoved > 0)
        fail(`the guard held, yet ${removed} deactivations / ${result.membersRemoved} member removals ran`, model, plan);
      this.outage = false;
      this.ws.writeDirectory(model.toDirectory());
      return this.sync(model);
    }
    const managed = this.managedCount(before);
    // Member removals: checkPlan proved none is wrongful and checkState that all needed ones ran,
    // so the plan's own count is the one the guard must judge.
    const memberRemovals = plan.summary.membersRemove;
    const sourceGroups = model.groups.filter((g) => !g.broken);
    const membersEmpty =
      sourceGroups.length > 0 &&
      sourceGroups.every((g) => !g.members.some((ext) => model.person(ext) !== undefined && model.isValid(model.person(ext) as Person)));
    // A source with no valid user (all left, or every entry rejected) while objects are managed is held too.
    const noValidUser = model.valid().length === 0 && managed > 0;
    const shouldTrip =
      noValidUser ||
      expectDestructive > MAX_DELETES ||
      (managed > 0 && (expectDestructive / managed) * 100 > MAX_DELETE_PERCENT) ||
      memberRemovals > MAX_MEMBER_REMOVALS ||
      (membersEmpty && memberRemovals > 0);
    if (plan.guard.tripped !== shouldTrip) {
      fail(
        `guard tripped=${plan.guard.tripped} but the model expects ${expectDestructive} deactivations, user and group deletions of ${managed} managed objects (limits ${MAX_DELETES} / ${MAX_DELETE_PERCENT}%) and ${memberRemovals} member removals (limit ${MAX_MEMBER_REMOVALS}${membersEmpty ? ', every source group empty' : ''}${noValidUser ? ', no valid user in the source' : ''})`,
        model,
        plan,
      );
    }
    if (plan.users.deactivate.length !== expectDeactivate) {
      fail(`the plan deactivates ${plan.users.deactivate.length} users, the model expects ${expectDeactivate}`, model, plan);
    }
    if (plan.users.delete.length !== expectUserDeletes) {
      fail(`the plan deletes ${plan.users.delete.length} users, the model expects ${expectUserDeletes}`, model, plan);
    }
    if (plan.groups.delete.length !== expectGroupDeletes) {
      fail(`the plan deletes ${plan.groups.delete.length} groups, the model expects ${expectGroupDeletes}`, model, plan);
    }
    if (shouldTrip) {
      // Held first: nothing destructive may run without the operator.
      const held = await this.ws.applyInProcess();
      if ((held.result.succeeded['user.deactivate'] ?? 0) + (held.result.succeeded['user.delete'] ?? 0) > 0)
        fail('deactivations or deletions ran while the guard held them', model, held.plan);
      this.checkNoHandover(model, before, this.snapshot());
    }
    const { plan: applied, result } = await this.ws.applyInProcess({ allowDeletes: shouldTrip });
    if (result.failed.length > 0) fail(`apply failed: ${JSON.stringify(result.failed)}`, model, applied);

    const after = this.snapshot();
    this.checkState(model, before, after);
    const again = await this.ws.planInProcess();
    if (again.summary.changes !== 0)
      fail(
        `not idempotent: the plan after apply still has ${again.summary.changes} changes: ${JSON.stringify(again.summary)}`,
        model,
        again,
      );
    this.checkConflicts(model, after, again);
    this.remember(after);
    this.pageHook = undefined;
    this.churned = undefined;
  }

  /**
   * Removals the model expects now: a kept person disabled in the source is deactivated; a
   * leaver's account (not claimed by a rejected entry) is deactivated when active, or deleted
   * under `deprovision.action: delete`. Nobody takes a leaver's account by name.
   */
  private expectedRemovals(model: DirectoryModel, before: Snapshot): { deactivate: number; delete: number } {
    const n = { deactivate: 0, delete: 0 };
    for (const u of before.users.values()) {
      if (this.admin.has(u.id) || !this.owner.has(u.id)) continue;
      const ext = u.externalId ?? this.owner.get(u.id) ?? '';
      const p = model.person(ext);
      if (!p && !this.claimedByInvalid(model, u)) {
        if (this.deprovision === 'delete') n.delete++;
        else if (u.active !== false) n.deactivate++;
      } else if (p && model.isValid(p) && !p.active && u.active !== false) n.deactivate++;
    }
    return n;
  }

  /** What the guard protects: the accounts and groups this tool owns, as the platform lists them. */
  private managedCount(before: Snapshot): number {
    let n = 0;
    for (const id of before.users.keys()) if (this.owner.has(id) && id !== this.churned) n++;
    for (const id of before.groups.keys()) if (this.groupOwner.has(id)) n++;
    return n;
  }

  /** Groups this tool owns whose entry left the source (a broken entry is still present). */
  private expectedGroupDeletes(model: DirectoryModel, before: Snapshot): number {
    let n = 0;
    for (const g of before.groups.values()) {
      const ext = g.externalId ?? this.groupOwner.get(g.id);
      if (!this.groupOwner.has(g.id) || ext === undefined) continue;
      if (!model.groups.some((x) => x.ext === ext) && !this.takesOverByName(model, before, g)) n++;
    }
    return n;
  }

  /**
   * A group whose entry left the source gives its name, and the platform group, to a new source
   * group of that name that has no platform group of its own (docs/reconcile.md, "Matching
   * precedence"): it is taken over, not deleted. Seen when the delete and the create reach one
   * full reconcile together.
   */
  private takesOverByName(model: DirectoryModel, before: Snapshot, g: ScimGroup): boolean {
    const owned = new Set([...before.groups.values()].map((x) => x.externalId));
    return model.groups.some((x) => !x.broken && !owned.has(x.ext) && nameKey(x.displayName) === nameKey(g.displayName));
  }

  /** The promises of one plan against the model: no admin account written, no handover, nobody present deprovisioned or removed from a group listing them. */
  checkPlan(model: DirectoryModel, before: Snapshot, plan: Plan): void {
    const touched = [
      ...plan.users.update.map((u) => u.id),
      ...plan.users.reactivate.map((u) => u.id),
      ...plan.users.deactivate.map((u) => u.id),
      ...plan.users.delete.map((u) => u.id),
    ];
    for (const id of touched)
      if (this.admin.has(id)) fail(`the plan writes the admin-created account ${id} (${this.admin.get(id)?.userName})`, model, plan);
    for (const u of [...plan.users.update, ...plan.users.reactivate]) {
      const was = before.users.get(u.id)?.externalId ?? this.owner.get(u.id);
      if (was !== undefined && was !== u.externalId)
        fail(`the plan gives ${was}'s account ${u.id} (${u.userName}) to ${u.externalId}`, model, plan);
    }
    for (const r of [...plan.users.deactivate, ...plan.users.delete]) {
      const ext = before.users.get(r.id)?.externalId ?? r.externalId;
      const p = model.person(ext);
      if (p && !(model.isValid(p) && !p.active))
        fail(`the plan deprovisions ${ext} (${r.userName}), who is present in the source`, model, plan);
    }
    for (const m of plan.memberships) {
      for (const r of m.remove) {
        const ext = r.id ? (before.users.get(r.id)?.externalId ?? r.externalId) : r.externalId;
        const g = model.groups.find((x) => x.ext === m.group.externalId);
        if (ext !== undefined && g?.members.includes(ext))
          fail(`the plan removes ${ext} from ${m.group.displayName}, which lists them`, model, plan);
        const adminAccount = r.id ? this.admin.get(r.id) : undefined;
        if (adminAccount && !model.usedNames().has(nameKey(adminAccount.userName))) {
          fail(
            `the plan removes the admin-created account ${r.userName}, which maps to nobody in the source, from ${m.group.displayName}`,
            model,
            plan,
          );
        }
      }
    }
  }

  private checkState(model: DirectoryModel, before: Snapshot, after: Snapshot): void {
    const users = [...after.users.values()];
    // Admin-created accounts: untouched.
    for (const a of this.admin.values()) {
      const u = after.users.get(a.id);
      if (!u) continue; // an admin may delete their own account; not our concern
      if (
        u.userName !== a.userName ||
        (u.active !== false) !== a.active ||
        u.name?.givenName !== a.givenName ||
        u.externalId !== undefined
      ) {
        fail(`the admin-created account ${a.userName} was written: ${JSON.stringify(u)}`, model);
      }
    }
    // Ownership: an account never passes from one person to another, present or absent.
    this.checkNoHandover(model, before, after);
    // Kept people: converged. A rename can be blocked, and then stays unapplied: the name it
    // wants is held by an account the tool must not touch (an admin's, a leaver's, or that of a
    // person whose entry is invalid), or by one whose own rename is blocked.
    const blocked = this.blockedRenames(model, users);
    for (const p of model.valid()) {
      const accounts = users.filter((u) => u.externalId === p.ext);
      if (accounts.length > 1) fail(`${p.ext} has ${accounts.length} accounts`, model);
      const acct = accounts[0];
      if (!acct) {
        // Legitimately absent: disabled before it was ever created, or its name is held by an
        // account it cannot take over (an admin's, or another present person's).
        const holder = users.find((u) => nameKey(u.userName) === nameKey(p.userName));
        const heldByOther =
          holder !== undefined && (this.admin.has(holder.id) || (holder.externalId !== undefined && holder.externalId !== p.ext));
        if (p.active && !heldByOther) fail(`${p.ext} (${p.userName}) has no account`, model);
        continue;
      }
      // Writes send the source's text in NFC (a decomposed spelling lands composed).
      if (acct.userName !== nfc(p.userName) && !blocked.has(p.ext))
        fail(`${p.ext}'s account is named ${acct.userName}, the source says ${p.userName}`, model);
      if ((acct.active !== false) !== p.active) fail(`${p.ext}'s account active=${acct.active}, the source says ${p.active}`, model);
      if (acct.name?.givenName !== p.given) fail(`${p.ext}'s givenName is ${acct.name?.givenName}, the source says ${p.given}`, model);
    }
    // Rejected people: their account is exactly as it was (not deprovisioned, not renamed).
    for (const p of model.invalid()) {
      const was = [...before.users.values()].find((u) => u.externalId === p.ext);
      if (!was) continue;
      const now = after.users.get(was.id);
      if (!now) fail(`the account of ${p.ext}, whose source entry is invalid, was deleted`, model);
      if ((now.active !== false) !== (was.active !== false))
        fail(`the account of ${p.ext}, whose source entry is invalid, changed active to ${now.active}`, model);
    }
    // Leavers' accounts this tool owns: deactivated.
    for (const u of users) {
      const ext = this.owner.get(u.id);
      if (ext === undefined || this.admin.has(u.id) || model.present(u.externalId ?? ext) || this.claimedByInvalid(model, u)) continue;
      if (this.deprovision === 'delete') fail(`leaver ${ext} (${u.userName}) still has an account under deprovision.action delete`, model);
      if (u.active !== false) fail(`leaver ${ext} (${u.userName}) is still active`, model);
    }
    // Groups that left the source: deleted.
    for (const [id, ext] of this.groupOwner) {
      const now = after.groups.get(id);
      const takenOver = now?.externalId !== undefined && now.externalId !== ext && model.groups.some((x) => x.ext === now.externalId);
      if (!model.groups.some((x) => x.ext === ext) && now !== undefined && !takenOver)
        fail(`group ${ext} left the source but still exists`, model);
    }
    // Groups. A rename is blocked like a user's: its name held by the group of an invalid entry.
    const blockedGroups = this.blockedGroupRenames(model, [...after.groups.values()]);
    const accountIdOf = (ext: string): string | undefined => users.find((u) => u.externalId === ext)?.id;
    for (const g of model.groups) {
      const wasGroup = [...before.groups.values()].find((x) => x.externalId === g.ext);
      const platform = [...after.groups.values()].filter((x) => x.externalId === g.ext);
      if (g.broken) {
        if (wasGroup && !after.groups.has(wasGroup.id)) fail(`group ${g.ext}, whose entry is invalid, was deleted`, model);
        continue;
      }
      if (platform.length === 0 && blockedGroups.has(g.ext)) continue; // its name is held by a present group's (see above)
      if (platform.length !== 1) fail(`group ${g.ext} (${g.displayName}) exists ${platform.length} times`, model);
      const pg = platform[0] as ScimGroup;
      if (pg.displayName !== g.displayName && !blockedGroups.has(g.ext))
        fail(`group ${g.ext} is named ${pg.displayName}, the source says ${g.displayName}`, model);
      const members = new Set((pg.members ?? []).map((m) => m.value));
      const previous = new Set((wasGroup?.members ?? []).map((m) => m.value));
      for (const ext of g.members) {
        const p = model.person(ext);
        const id = accountIdOf(ext);
        if (!p || !id) continue;
        if (model.isValid(p) && !members.has(id)) fail(`${ext} is listed in ${g.displayName} but not a member`, model);
        if (!model.isValid(p) && previous.has(id) && !members.has(id))
          fail(`${ext} (invalid entry) was removed from ${g.displayName}`, model);
      }
      for (const id of members) {
        if (this.admin.has(id)) continue;
        const ext = after.users.get(id)?.externalId;
        if (ext === undefined) continue;
        const p = model.person(ext);
        if (p && model.isValid(p) && !g.members.includes(ext))
          fail(`${ext} is a member of ${g.displayName}, which does not list them`, model);
        // A leaver's account that a rejected entry claims is protected: it keeps its groups (checked below).
        const account = after.users.get(id) as ScimUser;
        if (!model.present(ext) && !this.claimedByInvalid(model, account))
          fail(`leaver ${ext} is still a member of ${g.displayName}`, model);
      }
      for (const id of previous) {
        const u = after.users.get(id);
        if (!u || this.admin.has(id) || u.externalId === undefined || model.present(u.externalId)) continue;
        if (this.claimedByInvalid(model, u) && !members.has(id))
          fail(`${u.userName}, protected (a rejected entry claims it), was removed from ${g.displayName}`, model);
      }
      // A member that maps to nobody in the source is not ours to remove (rule: removal needs a positive mapping).
      const sourceNames = model.usedNames();
      for (const a of this.admin.values()) {
        if (sourceNames.has(nameKey(a.userName))) continue;
        if (previous.has(a.id) && after.users.has(a.id) && !members.has(a.id))
          fail(`admin-added member ${a.userName} was removed from ${g.displayName}`, model);
      }
    }
  }

  /** A rejected entry protects every account it could be: its externalId's, and the one with its userName. */
  private claimedByInvalid(model: DirectoryModel, u: ScimUser): boolean {
    return model.invalid().some((p) => p.ext === u.externalId || nameKey(p.userName) === nameKey(u.userName));
  }

  private blockedRenames(model: DirectoryModel, users: ScimUser[]): Set<string> {
    const holder = new Map(users.map((u) => [nameKey(u.userName), u]));
    const blocked = new Set<string>();
    for (let changed = true; changed; ) {
      changed = false;
      for (const p of model.valid()) {
        if (blocked.has(p.ext)) continue;
        const h = holder.get(nameKey(p.userName));
        if (!h || h.externalId === p.ext) continue;
        const owner = h.externalId === undefined ? undefined : model.person(h.externalId);
        // A leaver's account keeps its name until it is deleted: nobody takes it over.
        const leaverHolds = owner === undefined && h.externalId !== undefined;
        if (this.admin.has(h.id) || leaverHolds || (owner !== undefined && (!model.isValid(owner) || blocked.has(owner.ext)))) {
          blocked.add(p.ext);
          changed = true;
        }
      }
    }
    return blocked;
  }

  private blockedGroupRenames(model: DirectoryModel, groups: ScimGroup[]): Set<string> {
    const holder = new Map(groups.map((g) => [g.displayName.toLowerCase(), g]));
    const blocked = new Set<string>();
    for (let changed = true; changed; ) {
      changed = false;
      for (const g of model.groups) {
        if (g.broken || blocked.has(g.ext)) continue;
        const h = holder.get(g.displayName.toLowerCase());
        if (!h || h.externalId === g.ext) continue;
        const owner = model.groups.find((x) => x.ext === h.externalId);
        if (owner === undefined || owner.broken || blocked.has(owner.ext)) {
          blocked.add(g.ext);
          changed = true;
        }
      }
    }
    return blocked;
  }

  /** No account's externalId ever changes (this model never reassigns on purpose). */
  private checkNoHandover(model: DirectoryModel, before: Snapshot, after: Snapshot): void {
    for (const u of after.users.values()) {
      const was = this.owner.get(u.id) ?? before.users.get(u.id)?.externalId;
      if (was !== undefined && u.externalId !== undefined && u.externalId !== was)
        fail(
          `account ${u.id} (${u.userName}) passed from ${was}${model.present(was) ? ' (in the source)' : ' (absent)'} to ${u.externalId}`,
          model,
        );
    }
  }

  /**
   * A valid, active person without an account whose userName is held by the account of someone
   * absent from the source is an identity conflict, listed in the plan with that account.
   */
  private checkConflicts(model: DirectoryModel, after: Snapshot, plan: Plan): void {
    const users = [...after.users.values()];
    for (const p of model.valid()) {
      if (!p.active || users.some((u) => u.externalId === p.ext)) continue;
      const holder = users.find((u) => nameKey(u.userName) === nameKey(p.userName));
      if (!holder || holder.externalId === undefined || this.admin.has(holder.id) || model.present(holder.externalId)) continue;
      if (this.claimedByInvalid(model, holder)) continue; // protected for a rejected entry, not a conflict
      const listed = (plan.conflicts ?? []).some((c) => c.externalId === p.ext && c.account.id === holder.id && c.wants === 'create');
      if (!listed)
        fail(
          `${p.ext} (${p.userName}) has no account, the name is held by ${holder.externalId}'s, and the plan lists no conflict`,
          model,
          plan,
        );
    }
  }

  /** Takes the platform as it is now as the last reconciled state (owners of accounts and groups). */
  remember(after: Snapshot): void {
    for (const u of after.users.values()) {
      if (this.admin.has(u.id) || u.externalId === undefined) continue;
      this.owner.set(u.id, u.externalId);
    }
    for (const id of [...this.owner.keys()]) if (!after.users.has(id)) this.owner.delete(id);
    this.groupOwner.clear();
    for (const g of after.groups.values()) if (g.externalId !== undefined) this.groupOwner.set(g.id, g.externalId);
  }
}
