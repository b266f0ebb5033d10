/**
 * The simulated Google Workspace: users, groups and direct group members, held in memory
 * in list order (users by primary email, groups by email, as `orderBy=email` returns them).
 * Tests and benchmarks edit it directly between reads; every edit is recorded in the admin
 * audit log (activity.ts) as the Admin console would record it.
 */
import { createHash } from 'node:crypto';
import { AdminActivityLog } from './activity.ts';
import type { GoogleGroup, GoogleMember, GoogleUser, MemberType } from './types.ts';

const etag = (s: string): string => `"${createHash('sha1').update(s).digest('base64url').slice(0, 27)}"`;

export interface UserInput {
  primaryEmail: string;
  givenName?: string;
  familyName?: string;
  suspended?: boolean;
  archived?: boolean;
  isAdmin?: boolean;
  orgUnitPath?: string;
  aliases?: string[];
  customSchemas?: Record<string, Record<string, unknown>>;
  organizations?: GoogleUser['organizations'];
  externalIds?: GoogleUser['externalIds'];
  id?: string;
}

export interface MemberInput {
  /** A user or group email, or the customer id for `type: CUSTOMER`. */
  key: string;
  type?: MemberType;
  role?: GoogleMember['role'];
}

export class GoogleWorkspace {
  readonly domain: string;
  readonly customerId: string;
  private readonly users = new Map<string, GoogleUser>();
  private readonly groups = new Map<string, GoogleGroup>();
  private readonly members = new Map<string, MemberInput[]>();
  private readonly usersById = new Map<string, GoogleUser>();
  /** Deleted users, as users.list with showDeleted=true lists them. */
  private readonly deleted: GoogleUser[] = [];
  /** The admin audit log (Reports API, application `admin`). */
  readonly activity: AdminActivityLog;
  private readonly groupsById = new Map<string, GoogleGroup>();
  private seq = 0;
  private sortedUsers: GoogleUser[] | undefined;
  private sortedGroups: GoogleGroup[] | undefined;

  constructor(domain: string, customerId: string) {
    this.domain = domain;
    this.customerId = customerId;
    this.activity = new AdminActivityLog(customerId, `admin@${domain}`);
  }

  private nextId(prefix: string): string {
    this.seq++;
    return `${prefix}${String(100000000000000 + this.seq * 7919)}`;
  }

  addUser(u: UserInput): GoogleUser {
    const id = u.id ?? this.nextId('1');
    const fullName = [u.givenName, u.familyName].filter(Boolean).join(' ');
    const user: GoogleUser = {
      kind: 'admin#directory#user',
      id,
      etag: etag(`${id}:${u.primaryEmail}`),
      primaryEmail: u.primaryEmail,
      name: { ...(u.givenName ? { givenName: u.givenName } : {}), ...(u.familyName ? { familyName: u.familyName } : {}), fullName },
      isAdmin: u.isAdmin ?? false,
      isDelegatedAdmin: false,
      suspended: u.suspended ?? false,
      ...(u.suspended ? { suspensionReason: 'ADMIN' } : {}),
      archived: u.archived ?? false,
      orgUnitPath: u.orgUnitPath ?? '/',
      creationTime: '2024-01-15T09:00:00.000Z',
      customerId: this.customerId,
      emails: [{ address: u.primaryEmail, primary: true }, ...(u.aliases ?? []).map((address) => ({ address }))],
      ...(u.aliases?.length ? { aliases: [...u.aliases] } : {}),
      ...(u.customSchemas ? { customSchemas: structuredClone(u.customSchemas) } : {}),
      ...(u.organizations ? { organizations: structuredClone(u.organizations) } : {}),
      ...(u.externalIds ? { externalIds: structuredClone(u.externalIds) } : {}),
    };
    this.users.set(u.primaryEmail.toLowerCase(), user);
    this.usersById.set(id, user);
    this.sortedUsers = undefined;
    this.activity.record('USER_SETTINGS', 'CREATE_USER', { USER_EMAIL: u.primaryEmail });
    return user;
  }

  /** Change a user in place (suspend, rename…); the id stays. */
  updateUser(email: string, change: (u: GoogleUser) => void): GoogleUser {
    const u = this.user(email);
    if (!u) throw new Error(`no user ${email}`);
    const before = u.primaryEmail.toLowerCase();
    const was = structuredClone(u);
    change(u);
    if (u.suspended && u.suspensionReason === undefined) u.suspensionReason = 'ADMIN';
    if (!u.suspended) delete u.suspensionReason;
    if (before !== u.primaryEmail.toLowerCase()) {
      this.users.delete(before);
      this.users.set(u.primaryEmail.toLowerCase(), u);
    }
    u.etag = etag(`${u.id}:${JSON.stringify(u)}`);
    this.sortedUsers = undefined;
    this.recordUserChange(was, u);
    return u;
  }

  /** The Admin console's events for one user edit (User Settings event names). */
  private recordUserChange(was: GoogleUser, now: GoogleUser): void {
    const log = (name: string, extra: Record<string, string> = {}): void => {
      this.activity.record('USER_SETTINGS', name, { USER_EMAIL: now.primaryEmail, ...extra });
    };
    if (was.primaryEmail !== now.primaryEmail)
      this.activity.record('USER_SETTINGS', 'RENAME_USER', { USER_EMAIL: was.primaryEmail, NEW_VALUE: now.primaryEmail });
    if (was.suspended !== now.suspended) log(now.suspended ? 'SUSPEND_USER' : 'UNSUSPEND_USER');
    if (was.archived !== now.archived) log(now.archived ? 'ARCHIVE_USER' : 'UNARCHIVE_USER');
    if (was.orgUnitPath !== now.orgUnitPath) log('MOVE_USER_TO_ORG_UNIT', { ORG_UNIT_NAME: was.orgUnitPath, NEW_VALUE: now.orgUnitPath });
    if (was.name.givenName !== now.name.givenName) log('CHANGE_FIRST_NAME', { NEW_VALUE: now.name.givenName ?? '' });
    if (was.name.familyName !== now.name.familyName) log('CHANGE_LAST_NAME', { NEW_VALUE: now.name.familyName ?? '' });
    if (was.isAdmin !== now.isAdmin) log(now.isAdmin ? 'GRANT_ADMIN_PRIVILEGE' : 'REVOKE_ADMIN_PRIVILEGE');
  }

  removeUser(email: string): void {
    const u = this.user(email);
    if (u) {
      this.usersById.delete(u.id);
      this.deleted.push(u);
      this.activity.record('USER_SETTINGS', 'DELETE_USER', { USER_EMAIL: u.primaryEmail });
    }
    this.users.delete(email.toLowerCase());
    this.sortedUsers = undefined;
  }

  /** Users deleted (Google keeps them listable with showDeleted=true for 20 days). */
  listDeletedUsers(): readonly GoogleUser[] {
    return this.deleted;
  }

  addGroup(g: { email: string; name?: string; description?: string; members?: MemberInput[]; id?: string }): GoogleGroup {
    const id = g.id ?? this.nextId('0');
    const group: GoogleGroup = {
      kind: 'admin#directory#group',
      id,
      etag: etag(`${id}:${g.email}`),
      email: g.email,
      name: g.name ?? (g.email.split('@')[0] as string),
      description: g.description ?? '',
      directMembersCount: '0',
      adminCreated: true,
    };
    this.groups.set(g.email.toLowerCase(), group);
    this.groupsById.set(id, group);
    this.members.set(id, []);
    this.sortedGroups = undefined;
    this.activity.record('GROUP_SETTINGS', 'CREATE_GROUP', { GROUP_EMAIL: g.email });
    if (g.members) this.setMembers(g.email, g.members);
    return group;
  }

  /** Replace a group's direct members; each member added or removed is one admin event. */
  setMembers(groupEmail: string, members: MemberInput[]): void {
    const g = this.group(groupEmail);
    if (!g) throw new Error(`no group ${groupEmail}`);
    const keys = (list: MemberInput[]): Set<string> => new Set(list.map((m) => m.key.toLowerCase()));
    const before = keys(this.members.get(g.id) ?? []);
    const after = keys(members);
    for (const m of members)
      if (!before.has(m.key.toLowerCase()))
        this.activity.record('GROUP_SETTINGS', 'ADD_GROUP_MEMBER', { USER_EMAIL: m.key, GROUP_EMAIL: g.email });
    for (const m of this.members.get(g.id) ?? [])
      if (!after.has(m.key.toLowerCase()))
        this.activity.record('GROUP_SETTINGS', 'REMOVE_GROUP_MEMBER', { USER_EMAIL: m.key, GROUP_EMAIL: g.email });
    this.members.set(g.id, [...members]);
    g.directMembersCount = String(members.length);
  }

  /** Rename a group (its display name); recorded as CHANGE_GROUP_NAME. */
  renameGroup(groupEmail: string, name: string): GoogleGroup {
    const g = this.group(groupEmail);
    if (!g) throw new Error(`no group ${groupEmail}`);
    const old = g.name;
    g.name = name;
    g.etag = etag(`${g.id}:${JSON.stringify(g)}`);
    this.activity.record('GROUP_SETTINGS', 'CHANGE_GROUP_NAME', { GROUP_EMAIL: g.email, OLD_VALUE: old, NEW_VALUE: name });
    return g;
  }

  removeGroup(groupEmail: string): void {
    const g = this.group(groupEmail);
    if (!g) return;
    this.groups.delete(g.email.toLowerCase());
    this.groupsById.delete(g.id);
    this.members.delete(g.id);
    this.sortedGroups = undefined;
    this.activity.record('GROUP_SETTINGS', 'DELETE_GROUP', { GROUP_EMAIL: g.email });
  }

  /** Groups that have `key` (a user or group email or id) as a direct member: groups.list with userKey. */
  groupsOf(key: string): GoogleGroup[] {
    const target = this.user(key)?.primaryEmail ?? this.group(key)?.email ?? key;
    const k = target.toLowerCase();
    return this.listGroups().filter((g) =>
      (this.members.get(g.id) ?? []).some((m) => {
        const mk = m.key.toLowerCase();
        return mk === k || this.user(m.key)?.primaryEmail.toLowerCase() === k || this.group(m.key)?.email.toLowerCase() === k;
      }),
    );
  }

  user(key: string): GoogleUser | undefined {
    const k = key.toLowerCase();
    const direct = this.users.get(k) ?? this.usersById.get(key);
    if (direct) return direct;
    if (!k.includes('@')) return undefined;
    for (const u of this.users.values()) if (u.aliases?.some((a) => a.toLowerCase() === k)) return u;
    return undefined;
  }

  group(key: string): GoogleGroup | undefined {
    const k = key.toLowerCase();
    const direct = this.groups.get(k) ?? this.groupsById.get(key);
    if (direct) return direct;
    if (!k.includes('@')) return undefined;
    for (const g of this.groups.values()) if (g.aliases?.some((a) => a.toLowerCase() === k)) return g;
    return undefined;
  }

  listUsers(): readonly GoogleUser[] {
    this.sortedUsers ??= [...this.users.values()].sort((a, b) => cmp(a.primaryEmail, b.primaryEmail));
    return this.sortedUsers;
  }

  listGroups(): readonly GoogleGroup[] {
    this.sortedGroups ??= [...this.groups.values()].sort((a, b) => cmp(a.email, b.email));
    return this.sortedGroups;
  }

  /** Direct members as the API renders them; members naming nobody in the workspace become external USER members. */
  listMembers(group: GoogleGroup): GoogleMember[] {
    return (this.members.get(group.id) ?? []).map((m) => this.renderMember(m));
  }

  private renderMember(m: MemberInput): GoogleMember {
    const base = { kind: 'admin#directory#member' as const, role: m.role ?? ('MEMBER' as const) };
    if (m.type === 'CUSTOMER')
      return { ...base, etag: etag(`c:${this.customerId}`), id: this.customerId, type: 'CUSTOMER', status: 'ACTIVE' };
    const asUser = m.type === undefined || m.type === 'USER' ? this.user(m.key) : undefined;
    if (m.type === 'GROUP' || (m.type === undefined && !asUser && this.group(m.key))) {
      const g = this.group(m.key);
      const id = g?.id ?? `0ext${hashId(m.key)}`;
      return { ...base, etag: etag(`g:${id}`), id, email: g?.email ?? m.key, type: 'GROUP', status: 'ACTIVE' };
    }
    const u = asUser;
    const id = u?.id ?? `1ext${hashId(m.key)}`;
    const status = u === undefined ? 'UNDEFINED' : u.archived ? 'ARCHIVED' : u.suspended ? 'SUSPENDED' : 'ACTIVE';
    return { ...base, etag: etag(`u:${id}`), id, email: u?.primaryEmail ?? m.key, type: 'USER', status, delivery_settings: 'ALL_MAIL' };
  }

  emailExists(email: string): boolean {
    return this.user(email) !== undefined;
  }

  counts(): { users: number; groups: number } {
    return { users: this.users.size, groups: this.groups.size };
  }
}

function cmp(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  return x < y ? -1 : x > y ? 1 : 0;
}

function hashId(s: string): string {
  return BigInt(`0x${createHash('sha1').update(s.toLowerCase()).digest('hex').slice(0, 12)}`).toString();
}
