/**
 * The tenant's directory as the Entra simulator holds it: users, groups (security and
 * Microsoft 365) with direct members, and a change log that Graph delta queries read.
 * Every write bumps a tenant-wide version; an object remembers the version of its last
 * change, a group the version of each member added or removed, and a deleted object
 * leaves a tombstone, so `users/delta` and `groups/delta` can say exactly what changed.
 */
import { randomUUID } from 'node:crypto';

export interface EntraUser {
  id: string;
  userPrincipalName: string;
  accountEnabled: boolean;
  mail: string | null;
  displayName: string | null;
  givenName: string | null;
  surname: string | null;
  employeeId: string | null;
  department: string | null;
  jobTitle: string | null;
  onPremisesExtensionAttributes: Record<string, string | null>;
  /** Directory extension properties, `extension_<appId>_<name>`. */
  extensions: Record<string, unknown>;
  /** Attribute set → attribute → value. */
  customSecurityAttributes: Record<string, Record<string, unknown>> | null;
}

export interface EntraMember {
  type: 'user' | 'group';
  id: string;
}

export interface EntraGroup {
  id: string;
  displayName: string;
  mail: string | null;
  mailEnabled: boolean;
  securityEnabled: boolean;
  /** `['Unified']` for a Microsoft 365 group. */
  groupTypes: string[];
  members: EntraMember[];
}

interface MemberChange {
  version: number;
  member: EntraMember;
  removed: boolean;
}

export type UserInput = Partial<Omit<EntraUser, 'userPrincipalName'>> & { userPrincipalName: string };
export type GroupInput = Partial<Omit<EntraGroup, 'displayName' | 'members'>> & { displayName: string; members?: EntraMember[] };

const EMPTY_EXTENSION_ATTRIBUTES = (): Record<string, string | null> =>
  Object.fromEntries(Array.from({ length: 15 }, (_, i) => [`extensionAttribute${i + 1}`, null]));

export class EntraDirectory {
  readonly tenantId: string;
  readonly domain: string;
  private version = 1;
  private readonly users = new Map<string, { user: EntraUser; version: number }>();
  private readonly groups = new Map<string, { group: EntraGroup; version: number; memberLog: MemberChange[] }>();
  private readonly tombstones: Array<{ kind: 'user' | 'group'; id: string; version: number }> = [];
  private readonly upnIndex = new Map<string, string>();

  constructor(tenantId: string, domain: string) {
    this.tenantId = tenantId;
    this.domain = domain;
  }

  /** The current version: a delta token taken now sees every change after it. */
  get currentVersion(): number {
    return this.version;
  }

  addUser(input: UserInput): EntraUser {
    const user: EntraUser = {
      id: input.id ?? randomUUID(),
      userPrincipalName: input.userPrincipalName,
      accountEnabled: input.accountEnabled ?? true,
      mail: input.mail === undefined ? input.userPrincipalName : input.mail,
      displayName: input.displayName ?? null,
      givenName: input.givenName ?? null,
      surname: input.surname ?? null,
      employeeId: input.employeeId ?? null,
      department: input.department ?? null,
      jobTitle: input.jobTitle ?? null,
      onPremisesExtensionAttributes: { ...EMPTY_EXTENSION_ATTRIBUTES(), ...input.onPremisesExtensionAttributes },
      extensions: input.extensions ?? {},
      customSecurityAttributes: input.customSecurityAttributes ?? null,
    };
    this.users.set(user.id, { user, version: ++this.version });
    this.upnIndex.set(user.userPrincipalName.toLowerCase(), user.id);
    return user;
  }

  updateUser(idOrUpn: string, edit: (u: EntraUser) => void): void {
    const e = this.users.get(this.userId(idOrUpn));
    if (!e) throw new Error(`no user ${idOrUpn}`);
    this.upnIndex.delete(e.user.userPrincipalName.toLowerCase());
    edit(e.user);
    this.upnIndex.set(e.user.userPrincipalName.toLowerCase(), e.user.id);
    e.version = ++this.version;
  }

  deleteUser(idOrUpn: string): void {
    const id = this.userId(idOrUpn);
    const e = this.users.get(id);
    if (!e) throw new Error(`no user ${idOrUpn}`);
    this.users.delete(id);
    this.upnIndex.delete(e.user.userPrincipalName.toLowerCase());
    this.tombstones.push({ kind: 'user', id, version: ++this.version });
    // Removing a user removes its memberships, as Entra does.
    for (const g of this.groups.values()) if (g.group.members.some((m) => m.id === id)) this.removeMember(g.group.id, id);
  }

  addGroup(input: GroupInput): EntraGroup {
    const group: EntraGroup = {
      id: input.id ?? randomUUID(),
      displayName: input.displayName,
      mail: input.mail ?? null,
      mailEnabled: input.mailEnabled ?? false,
      securityEnabled: input.securityEnabled ?? true,
      groupTypes: input.groupTypes ?? [],
      members: [],
    };
    const version = ++this.version;
    const memberLog = (input.members ?? []).map((member) => ({ version, member, removed: false }));
    group.members = [...(input.members ?? [])];
    this.groups.set(group.id, { group, version, memberLog });
    return group;
  }

  updateGroup(id: string, edit: (g: EntraGroup) => void): void {
    const e = this.groups.get(id);
    if (!e) throw new Error(`no group ${id}`);
    edit(e.group);
    e.version = ++this.version;
  }

  deleteGroup(id: string): void {
    if (!this.groups.delete(id)) throw new Error(`no group ${id}`);
    this.tombstones.push({ kind: 'group', id, version: ++this.version });
    for (const g of this.groups.values()) if (g.group.members.some((m) => m.id === id)) this.removeMember(g.group.id, id);
  }

  addMember(groupId: string, member: EntraMember): void {
    const e = this.groups.get(groupId);
    if (!e) throw new Error(`no group ${groupId}`);
    if (e.group.members.some((m) => m.id === member.id)) return;
    e.group.members.push(member);
    e.version = ++this.version;
    e.memberLog.push({ version: e.version, member, removed: false });
  }

  removeMember(groupId: string, memberId: string): void {
    const e = this.groups.get(groupId);
    if (!e) throw new Error(`no group ${groupId}`);
    const m = e.group.members.find((x) => x.id === memberId);
    if (!m) return;
    e.group.members = e.group.members.filter((x) => x.id !== memberId);
    e.version = ++this.version;
    e.memberLog.push({ version: e.version, member: m, removed: true });
  }

  user(idOrUpn: string): EntraUser | undefined {
    return this.users.get(this.userId(idOrUpn))?.user;
  }

  group(id: string): EntraGroup | undefined {
    return this.groups.get(id)?.group;
  }

  groupByName(displayName: string): EntraGroup | undefined {
    return this.listGroups().find((g) => g.displayName === displayName);
  }

  /** Users in creation order (Graph's order for an unsorted list is stable, not specified). */
  listUsers(): EntraUser[] {
    return [...this.users.values()].map((e) => e.user);
  }

  listGroups(): EntraGroup[] {
    return [...this.groups.values()].map((e) => e.group);
  }

  /** Every user and group below a group, each once (cycles end the walk). */
  transitiveMembers(groupId: string): EntraMember[] {
    const out = new Map<string, EntraMember>();
    const seen = new Set<string>([groupId]);
    const walk = (id: string): void => {
      for (const m of this.groups.get(id)?.group.members ?? []) {
        if (!out.has(m.id)) out.set(m.id, m);
        if (m.type === 'group' && !seen.has(m.id)) {
          seen.add(m.id);
          walk(m.id);
        }
      }
    };
    walk(groupId);
    out.delete(groupId);
    return [...out.values()];
  }

  /** Users changed after `since` (all of them for 0), and users deleted after it. */
  userChanges(since: number): { changed: EntraUser[]; deleted: string[] } {
    return {
      changed: [...this.users.values()].filter((e) => e.version > since).map((e) => e.user),
      deleted: this.tombstones.filter((t) => t.kind === 'user' && t.version > since && since > 0).map((t) => t.id),
    };
  }

  /**
   * Groups changed after `since`, each with its membership changes after `since` (for 0:
   * its current members), and groups deleted after it.
   */
  groupChanges(since: number): {
    changed: Array<{ group: EntraGroup; members: Array<EntraMember & { removed: boolean }> }>;
    deleted: string[];
  } {
    const changed = [...this.groups.values()]
      .filter((e) => e.version > since)
      .map((e) => {
        if (since === 0) return { group: e.group, members: e.group.members.map((m) => ({ ...m, removed: false })) };
        // The last change of each member wins.
        const last = new Map<string, MemberChange>();
        for (const c of e.memberLog) if (c.version > since) last.set(c.member.id, c);
        return { group: e.group, members: [...last.values()].map((c) => ({ ...c.member, removed: c.removed })) };
      });
    const deleted = this.tombstones.filter((t) => t.kind === 'group' && t.version > since && since > 0).map((t) => t.id);
    return { changed, deleted };
  }

  counts(): { users: number; groups: number } {
    return { users: this.users.size, groups: this.groups.size };
  }

  private userId(idOrUpn: string): string {
    return this.upnIndex.get(idOrUpn.toLowerCase()) ?? idOrUpn;
  }
}
