/**
 * The desired state kept between two full reads, brought up to date by a source's deltas
 * (sources/changes.ts) in time proportional to the change, not to the directory: users and
 * groups live in arrays with an index by externalId (a removal swaps the last entry into
 * its place), and the user → groups and name → externalId indexes follow every change.
 *
 * `state` is a live view: the same DesiredState object, whose arrays change in place. A
 * delta is a set of complete current records, so applying one twice, or an old one after a
 * newer one, converges on what the next full read says (the daemon replaces the cache then).
 */
import { nameKey } from '../../identity/canonical-name.ts';
import {
  isUnidentified,
  type DesiredState,
  type NormalizedGroup,
  type NormalizedUser,
  type SourceRejection,
} from '../../identity/model.ts';
import type { SourceDelta } from '../../sources/changes.ts';

/** What a delta changed, by externalId: the identities a targeted reconcile starts from. */
export interface AffectedSet {
  /** Users upserted, removed or rejected. */
  users: string[];
  /** Groups upserted, removed or rejected, and groups a removed or rejected user was taken out of. */
  groups: string[];
}

/** Desired state indexes, read by the targeted planner. */
export interface DesiredLookup {
  readonly state: DesiredState;
  user(externalId: string): NormalizedUser | undefined;
  group(externalId: string): NormalizedGroup | undefined;
  /** externalId of the valid user whose userName has this `nameKey`. */
  userByNameKey(key: string): string | undefined;
  /** externalId of the group whose displayName has this `nameKey`. */
  groupByNameKey(key: string): string | undefined;
  /** Groups listing the user as a member. */
  groupsOf(userExternalId: string): readonly string[];
  /** Position in `state.users` / `state.groups` (planning keeps the source's order). */
  userPosition(externalId: string): number;
  groupPosition(externalId: string): number;
}

/** A cache's view → the cache, so a planner given only `cache.state` uses its indexes. */
const lookups = new WeakMap<DesiredState, DesiredLookup>();

/** The identity a rejection replaces: a later rejection of it, or a valid upsert of it, drops it. */
function rejectionKey(r: SourceRejection): string {
  const kind = r.kind === 'group' ? 'group' : 'user';
  if (r.member !== undefined) return `member:${r.externalId ?? ''}:${r.member}`;
  if (r.externalId !== undefined) return `${kind}:ext:${r.externalId}`;
  const name = kind === 'group' ? r.displayName : r.userName;
  if (name !== undefined) return `${kind}:name:${nameKey(name)}`;
  return `ref:${r.ref}`;
}

export class DesiredCache implements DesiredLookup {
  readonly state: DesiredState;
  private readonly userAt = new Map<string, number>();
  private readonly groupAt = new Map<string, number>();
  private readonly userName = new Map<string, string>();
  private readonly groupName = new Map<string, string>();
  private readonly memberOf = new Map<string, Set<string>>();
  private readonly rejections = new Map<string, SourceRejection>();

  private constructor(state: DesiredState) {
    this.state = state;
    lookups.set(state, this);
    state.users.forEach((u, i) => {
      this.userAt.set(u.externalId, i);
      this.userName.set(nameKey(u.userName), u.externalId);
    });
    state.groups.forEach((g, i) => {
      this.groupAt.set(g.externalId, i);
      this.groupName.set(nameKey(g.displayName), g.externalId);
      for (const m of g.members) this.addMemberOf(m, g.externalId);
    });
    for (const r of state.rejected) this.rejections.set(rejectionKey(r), r);
  }

  /** A cache over a copy of a complete desired state (a full read); the input is not changed. */
  static from(state: DesiredState): DesiredCache {
    return new DesiredCache({
      users: [...state.users],
      groups: state.groups.map((g) => ({ ...g, members: [...g.members] })),
      rejected: [...state.rejected],
      stats: { ...state.stats },
    });
  }

  user(externalId: string): NormalizedUser | undefined {
    const i = this.userAt.get(externalId);
    return i === undefined ? undefined : this.state.users[i];
  }

  group(externalId: string): NormalizedGroup | undefined {
    const i = this.groupAt.get(externalId);
    return i === undefined ? undefined : this.state.groups[i];
  }

  userByNameKey(key: string): string | undefined {
    return this.userName.get(key);
  }

  groupByNameKey(key: string): string | undefined {
    return this.groupName.get(key);
  }

  groupsOf(userExternalId: string): readonly string[] {
    return [...(this.memberOf.get(userExternalId) ?? [])];
  }

  userPosition(externalId: string): number {
    return this.userAt.get(externalId) ?? -1;
  }

  groupPosition(externalId: string): number {
    return this.groupAt.get(externalId) ?? -1;
  }

  /** Applies a delta in place; returns what it changed. */
  apply(delta: SourceDelta): AffectedSet {
    const users = new Set<string>();
    const groups = new Set<string>();
    for (const u of delta.users.upserted) {
      users.add(u.externalId);
      this.dropRejections(
        (r) =>
          r.kind !== 'group' &&
          (r.externalId === u.externalId ||
            (r.externalId === undefined && r.userName !== undefined && nameKey(r.userName) === nameKey(u.userName))),
      );
      this.upsertUser(u);
    }
    for (const ext of delta.users.removed) {
      users.add(ext);
      this.dropRejections((r) => r.kind !== 'group' && r.member === undefined && r.externalId === ext);
      for (const g of this.removeUser(ext)) groups.add(g);
    }
    for (const g of delta.groups.upserted) {
      groups.add(g.externalId);
      this.dropRejections((r) => r.kind === 'group' && r.externalId === g.externalId);
      this.upsertGroup(g);
    }
    for (const ext of delta.groups.removed) {
      groups.add(ext);
      this.dropRejections((r) => r.kind === 'group' && r.externalId === ext);
      this.removeGroup(ext);
    }
    for (const r of delta.rejected) {
      this.rejections.set(rejectionKey(r), r);
      if (isUnidentified(r)) continue;
      if (r.member !== undefined) {
        if (r.externalId !== undefined) groups.add(r.externalId);
        continue;
      }
      // A rejected entry is no longer a valid object of the source (as in a full read).
      if (r.kind === 'group') {
        if (r.externalId !== undefined) {
          groups.add(r.externalId);
          this.removeGroup(r.externalId);
        }
        continue;
      }
      if (r.externalId !== undefined) {
        users.add(r.externalId);
        for (const g of this.removeUser(r.externalId)) groups.add(g);
      }
      for (const g of r.memberOf ?? []) groups.add(g);
    }
    this.state.rejected = [...this.rejections.values()];
    return { users: [...users], groups: [...groups] };
  }

  private dropRejections(pred: (r: SourceRejection) => boolean): void {
    for (const [k, r] of this.rejections) if (pred(r)) this.rejections.delete(k);
  }

  private upsertUser(u: NormalizedUser): void {
    const i = this.userAt.get(u.externalId);
    if (i === undefined) {
      this.userAt.set(u.externalId, this.state.users.length);
      this.state.users.push(u);
    } else {
      const prev = this.state.users[i] as NormalizedUser;
      if (this.userName.get(nameKey(prev.userName)) === u.externalId) this.userName.delete(nameKey(prev.userName));
      this.state.users[i] = u;
    }
    this.userName.set(nameKey(u.userName), u.externalId);
  }

  /** Removes a user and its memberships; returns the groups it was taken out of. */
  private removeUser(ext: string): string[] {
    const i = this.userAt.get(ext);
    if (i !== undefined) {
      const prev = this.state.users[i] as NormalizedUser;
      if (this.userName.get(nameKey(prev.userName)) === ext) this.userName.delete(nameKey(prev.userName));
      removeAt(this.state.users, this.userAt, i, (u) => u.externalId);
    }
    const of = [...(this.memberOf.get(ext) ?? [])];
    for (const g of of) {
      const group = this.group(g);
      if (group) this.replaceGroupAt(g, { ...group, members: group.members.filter((m) => m !== ext) });
    }
    this.memberOf.delete(ext);
    return of;
  }

  private upsertGroup(g: NormalizedGroup): void {
    const i = this.groupAt.get(g.externalId);
    if (i === undefined) {
      this.groupAt.set(g.externalId, this.state.groups.length);
      this.state.groups.push(g);
      for (const m of g.members) this.addMemberOf(m, g.externalId);
      this.groupName.set(nameKey(g.displayName), g.externalId);
      return;
    }
    const prev = this.state.groups[i] as NormalizedGroup;
    for (const m of prev.members) this.memberOf.get(m)?.delete(g.externalId);
    for (const m of g.members) this.addMemberOf(m, g.externalId);
    if (this.groupName.get(nameKey(prev.displayName)) === g.externalId) this.groupName.delete(nameKey(prev.displayName));
    this.groupName.set(nameKey(g.displayName), g.externalId);
    this.state.groups[i] = g;
  }

  private replaceGroupAt(ext: string, g: NormalizedGroup): void {
    const i = this.groupAt.get(ext);
    if (i !== undefined) this.state.groups[i] = g;
  }

  private removeGroup(ext: string): void {
    const i = this.groupAt.get(ext);
    if (i === undefined) return;
    const prev = this.state.groups[i] as NormalizedGroup;
    for (const m of prev.members) this.memberOf.get(m)?.delete(ext);
    if (this.groupName.get(nameKey(prev.displayName)) === ext) this.groupName.delete(nameKey(prev.displayName));
    removeAt(this.state.groups, this.groupAt, i, (g) => g.externalId);
  }

  private addMemberOf(user: string, group: string): void {
    const set = this.memberOf.get(user);
    if (set) set.add(group);
    else this.memberOf.set(user, new Set([group]));
  }
}

/** O(1) removal: the last entry takes the freed place. */
function removeAt<T>(list: T[], at: Map<string, number>, i: number, key: (t: T) => string): void {
  const gone = list[i] as T;
  const last = list.pop() as T;
  at.delete(key(gone));
  if (i < list.length) {
    list[i] = last;
    at.set(key(last), i);
  }
}

/** Applies a source delta to the cached desired state (in place); returns the identities it touched. */
export function applyDelta(cache: DesiredCache, delta: SourceDelta): AffectedSet {
  return cache.apply(delta);
}

/** The identities of several deltas coalesced into one targeted run, each once. */
export function mergeAffected(...sets: AffectedSet[]): AffectedSet {
  return {
    users: [...new Set(sets.flatMap((s) => s.users))],
    groups: [...new Set(sets.flatMap((s) => s.groups))],
  };
}

/**
 * The indexes of a desired state: the cache's own for a cache's view (`cache.state`), else
 * built once from a copy (O(n); such a state must not be changed afterwards).
 */
export function desiredLookup(state: DesiredState): DesiredLookup {
  const found = lookups.get(state);
  if (found) return found;
  const built = DesiredCache.from(state);
  lookups.set(state, built);
  return built;
}
