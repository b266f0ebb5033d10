/**
 * The simulated Google Workspace: users, groups and direct group members, held in memory
 * in list order (users by primary email, groups by email, as `orderBy=email` returns them).
 * Tests and benchmarks edit it directly between reads.
 */
import { createHash } from 'node:crypto';
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
  private readonly groupsById = new Map<string, GoogleGroup>();
  private seq = 0;
  private sortedUsers: GoogleUser[] | undefined;
  private sortedGroups: GoogleGroup[] | undefined;

  constructor(domain: string, customerId: string) {
    this.domain = domain;
    this.customerId = customerId;
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
    return user;
  }

  /** Change a user in place (suspend, rename…); the id stays. */
  updateUser(email: string, change: (u: GoogleUser) => void): GoogleUser {
    const u = this.user(email);
    if (!u) throw new Error(`no user ${email}`);
    const before = u.primaryEmail.toLowerCase();
    change(u);
    if (u.suspended && u.suspensionReason === undefined) u.suspensionReason = 'ADMIN';
    if (!u.suspended) delete u.suspensionReason;
    if (before !== u.primaryEmail.toLowerCase()) {
      this.users.delete(before);
      this.users.set(u.primaryEmail.toLowerCase(), u);
    }
    u.etag = etag(`${u.id}:${JSON.stringify(u)}`);
    this.sortedUsers = undefined;
    return u;
  }

  removeUser(email: string): void {
    const u = this.user(email);
    if (u) this.usersById.delete(u.id);
    this.users.delete(email.toLowerCase());
    this.sortedUsers = undefined;
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
    if (g.members) this.setMembers(g.email, g.members);
    return group;
  }

  setMembers(groupEmail: string, members: MemberInput[]): void {
    const g = this.group(groupEmail);
    if (!g) throw new Error(`no group ${groupEmail}`);
    this.members.set(g.id, [...members]);
    g.directMembersCount = String(members.length);
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
