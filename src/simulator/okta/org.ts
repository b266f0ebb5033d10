/**
 * The simulated Okta org: users with the eight lifecycle statuses, groups of the three
 * types (OKTA_GROUP, APP_GROUP imported from an application, BUILT_IN "Everyone"), direct
 * memberships, and group rules whose results are memberships like any other — as the
 * Management API shows them. Every change stamps `lastUpdated` (users, groups) or
 * `lastMembershipUpdated` (groups) from a clock that never repeats a millisecond.
 */
import { mulberry32 } from '../prng.ts';

export type OktaStatus =
  | 'STAGED'
  | 'PROVISIONED'
  | 'ACTIVE'
  | 'RECOVERY'
  | 'PASSWORD_EXPIRED'
  | 'LOCKED_OUT'
  | 'SUSPENDED'
  | 'DEPROVISIONED';

export const OKTA_STATUSES: readonly OktaStatus[] = [
  'STAGED',
  'PROVISIONED',
  'ACTIVE',
  'RECOVERY',
  'PASSWORD_EXPIRED',
  'LOCKED_OUT',
  'SUSPENDED',
  'DEPROVISIONED',
];

export interface SimOktaUser {
  id: string;
  status: OktaStatus;
  created: string;
  activated: string | null;
  statusChanged: string | null;
  lastLogin: string | null;
  lastUpdated: string;
  passwordChanged: string | null;
  type: { id: string };
  profile: Record<string, unknown> & { login: string; email: string; firstName?: string; lastName?: string };
}

export type OktaGroupType = 'OKTA_GROUP' | 'APP_GROUP' | 'BUILT_IN';

export interface SimOktaGroup {
  id: string;
  created: string;
  lastUpdated: string;
  lastMembershipUpdated: string;
  objectClass: string[];
  type: OktaGroupType;
  profile: { name: string; description?: string | null } & Record<string, unknown>;
}

/** A group rule: `user.<profile attribute>=="value"` assigns matching users to groups. */
export interface SimGroupRule {
  id: string;
  name: string;
  status: 'ACTIVE' | 'INACTIVE';
  attribute: string;
  value: string;
  groupIds: string[];
}

const ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

export class OktaOrg {
  private readonly users = new Map<string, SimOktaUser>();
  private readonly groups = new Map<string, SimOktaGroup>();
  /** Direct (API/admin) assignments, by group id. */
  private readonly direct = new Map<string, Set<string>>();
  private readonly rules: SimGroupRule[] = [];
  private lastMs = Date.parse('2024-01-01T00:00:00.000Z');
  private readonly rand = mulberry32(0x0c7a);
  private changes = 0;
  /** User id → when its latest change reaches the search index (ms). */
  private readonly indexedAt = new Map<string, number>();

  /** Moves on every change (listings cached by the server are keyed by it). */
  version(): number {
    return this.changes;
  }

  /** An Okta-shaped id: a 3-character prefix (`00u` users, `00g` groups, `0pr` rules) and 17 more. */
  newId(prefix: string): string {
    let s = prefix;
    while (s.length < 20) s += ALPHABET[Math.floor(this.rand() * ALPHABET.length)];
    return s;
  }

  /** A timestamp later than every one handed out before (real time, or 1 ms past the last). */
  now(): string {
    this.changes++;
    this.lastMs = Math.max(Date.now(), this.lastMs + 1);
    return new Date(this.lastMs).toISOString();
  }

  addUser(profile: SimOktaUser['profile'], status: OktaStatus = 'ACTIVE'): SimOktaUser {
    const t = this.now();
    const u: SimOktaUser = {
      id: this.newId('00u'),
      status,
      created: t,
      activated: status === 'STAGED' ? null : t,
      statusChanged: t,
      lastLogin: null,
      lastUpdated: t,
      passwordChanged: status === 'ACTIVE' ? t : null,
      type: { id: 'oty1simdefault0000000' },
      profile,
    };
    this.users.set(u.id, u);
    this.applyRules();
    return u;
  }

  addGroup(name: string, type: OktaGroupType = 'OKTA_GROUP', description?: string): SimOktaGroup {
    const t = this.now();
    const g: SimOktaGroup = {
      id: this.newId('00g'),
      created: t,
      lastUpdated: t,
      lastMembershipUpdated: t,
      objectClass: [type === 'APP_GROUP' ? 'okta:windows_security_principal' : 'okta:user_group'],
      type,
      profile: { name, description: description ?? null },
    };
    this.groups.set(g.id, g);
    this.direct.set(g.id, new Set());
    return g;
  }

  addRule(name: string, attribute: string, value: string, groupIds: string[]): SimGroupRule {
    const r: SimGroupRule = { id: this.newId('0pr'), name, status: 'ACTIVE', attribute, value, groupIds };
    this.rules.push(r);
    this.applyRules();
    return r;
  }

  user(idOrLogin: string): SimOktaUser {
    const u = this.users.get(idOrLogin) ?? [...this.users.values()].find((x) => x.profile.login === idOrLogin);
    if (!u) throw new Error(`no Okta user ${idOrLogin}`);
    return u;
  }

  group(idOrName: string): SimOktaGroup {
    const g = this.groups.get(idOrName) ?? [...this.groups.values()].find((x) => x.profile.name === idOrName);
    if (!g) throw new Error(`no Okta group ${idOrName}`);
    return g;
  }

  /** Change a user (profile or status) as an admin would; lastUpdated moves, rules re-evaluate. */
  updateUser(idOrLogin: string, fn: (u: SimOktaUser) => void): SimOktaUser {
    const u = this.user(idOrLogin);
    const status = u.status;
    fn(u);
    u.lastUpdated = this.now();
    if (u.status !== status) u.statusChanged = u.lastUpdated;
    this.applyRules();
    return u;
  }

  setMembers(groupIdOrName: string, userIds: string[]): void {
    const g = this.group(groupIdOrName);
    this.direct.set(g.id, new Set(userIds));
    g.lastMembershipUpdated = this.now();
  }

  addMember(groupIdOrName: string, userId: string): void {
    const g = this.group(groupIdOrName);
    this.direct.get(g.id)?.add(userId);
    g.lastMembershipUpdated = this.now();
  }

  /**
   * Okta's search index trails writes by a few seconds: the user's latest change is not
   * matched by `lastUpdated` searches until `ms` from now (set after the change).
   */
  delayIndex(userId: string, ms: number): void {
    this.indexedAt.set(userId, Date.now() + ms);
  }

  /** How many users' latest changes are not in the search index yet (listings cached by the server are keyed by it). */
  unindexed(now = Date.now()): number {
    let n = 0;
    for (const at of this.indexedAt.values()) if (at > now) n++;
    return n;
  }

  /** Whether a `lastUpdated` search sees the user's latest change yet. */
  indexed(userId: string, now = Date.now()): boolean {
    return (this.indexedAt.get(userId) ?? 0) <= now;
  }

  listUsers(): SimOktaUser[] {
    return [...this.users.values()];
  }

  listGroups(): SimOktaGroup[] {
    return [...this.groups.values()];
  }

  listRules(): SimGroupRule[] {
    return [...this.rules];
  }

  /**
   * Members as GET /groups/{id}/users lists them: direct assignments and rule results,
   * without DEPROVISIONED users (Okta removes a deactivated user from every group);
   * BUILT_IN "Everyone" holds every user that is not deprovisioned.
   */
  members(groupId: string): SimOktaUser[] {
    const g = this.groups.get(groupId);
    if (!g) return [];
    if (g.type === 'BUILT_IN') return this.listUsers().filter((u) => u.status !== 'DEPROVISIONED');
    const ids = new Set(this.direct.get(groupId) ?? []);
    for (const r of this.rules) {
      if (r.status !== 'ACTIVE' || !r.groupIds.includes(groupId)) continue;
      for (const u of this.users.values()) if (String(u.profile[r.attribute] ?? '') === r.value) ids.add(u.id);
    }
    return [...ids].map((id) => this.users.get(id)).filter((u): u is SimOktaUser => u !== undefined && u.status !== 'DEPROVISIONED');
  }

  /** Rule results changed: the target groups' lastMembershipUpdated moves (cheaply: every rule target). */
  private applyRules(): void {
    if (this.rules.length === 0) return;
    const t = new Date(this.lastMs).toISOString();
    for (const r of this.rules)
      for (const id of r.groupIds) {
        const g = this.groups.get(id);
        if (g) g.lastMembershipUpdated = t;
      }
  }
}

export interface OktaSeedOptions {
  users: number;
  groups: number;
  /** Every n-th user is SUSPENDED (0: none). */
  suspendedEvery?: number;
  /** Every n-th user (offset by 1) is DEPROVISIONED (0: none). */
  deprovisionedEvery?: number;
  /** Every n-th user (offset by 2) is LOCKED_OUT (0: none). */
  lockedOutEvery?: number;
  /** Every n-th group is an APP_GROUP (imported from an application). */
  appGroupEvery?: number;
  /** Group rules: one per department, assigning that department to `Dept <name>` groups. */
  rules?: boolean;
  domain?: string;
}

export const DEPARTMENTS = ['Engineering', 'Sales', 'Finance', 'Support', 'Legal'] as const;

/**
 * A deterministic org: `user00001@domain`…, groups `Group 0`… (every `appGroupEvery`-th an
 * APP_GROUP), each user in two or three groups, plus one rule-driven group per department.
 */
export function seedOrg(org: OktaOrg, o: OktaSeedOptions): { users: SimOktaUser[]; groups: SimOktaGroup[] } {
  const domain = o.domain ?? 'example.com';
  const users: SimOktaUser[] = [];
  for (let i = 1; i <= o.users; i++) {
    const n = String(i).padStart(5, '0');
    let status: OktaStatus = 'ACTIVE';
    if (o.suspendedEvery && i % o.suspendedEvery === 0) status = 'SUSPENDED';
    else if (o.deprovisionedEvery && i % o.deprovisionedEvery === 1) status = 'DEPROVISIONED';
    else if (o.lockedOutEvery && i % o.lockedOutEvery === 2) status = 'LOCKED_OUT';
    users.push(
      org.addUser(
        {
          login: `user${n}@${domain}`,
          email: `user${n}@${domain}`,
          firstName: `First${n}`,
          lastName: `Last${n}`,
          displayName: `First${n} Last${n}`,
          department: DEPARTMENTS[i % DEPARTMENTS.length] as string,
          title: i % 10 === 0 ? 'Manager' : 'Engineer',
          employeeNumber: `E${n}`,
          costCenter: `CC-${i % 7}`,
        },
        status,
      ),
    );
  }
  // Every org has it; the source leaves BUILT_IN groups out unless asked.
  if (!org.listGroups().some((g) => g.type === 'BUILT_IN')) org.addGroup('Everyone', 'BUILT_IN', 'All users in your organization');
  const groups: SimOktaGroup[] = [];
  for (let j = 0; j < o.groups; j++) {
    const app = o.appGroupEvery !== undefined && o.appGroupEvery > 0 && j % o.appGroupEvery === o.appGroupEvery - 1;
    groups.push(org.addGroup(`Group ${j}`, app ? 'APP_GROUP' : 'OKTA_GROUP', app ? 'imported from Active Directory' : undefined));
  }
  if (groups.length > 0)
    for (let i = 0; i < users.length; i++) {
      const u = users[i] as SimOktaUser;
      for (const k of [i % groups.length, (i * 7 + 3) % groups.length, ...(i % 3 === 0 ? [(i * 13 + 5) % groups.length] : [])])
        org.addMember((groups[k] as SimOktaGroup).id, u.id);
    }
  if (o.rules) {
    for (const d of DEPARTMENTS) {
      const g = org.addGroup(`Dept ${d}`, 'OKTA_GROUP', `members by rule: department ${d}`);
      org.addRule(`Department ${d}`, 'department', d, [g.id]);
    }
  }
  return { users, groups };
}
