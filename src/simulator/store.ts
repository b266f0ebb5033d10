/**
 * The simulator's SCIM state: users, groups and the membership maps between them. HTTP
 * routes and tests use the same methods, so drift created "behind the client's back"
 * follows exactly the rules an HTTP write would (uniqueness, member references, versions).
 * Resources returned are the stored objects: read them, change them through this API.
 */
import { randomUUID } from 'node:crypto';
import type { ScimGroup, ScimMember, ScimResource, ScimUser } from '../platform/scim/types.ts';
import { ResourceCollection } from './collection.ts';
import { ScimHttpError, badValue, notFound } from './scim-error.ts';
import { checkUniqueEmailTypes, normalizeGroup, normalizeUser } from './validate.ts';

export const SCIM_PREFIX = '/api/scim/v2';

export interface WriteOptions {
  /** HTTP writes refuse bodies without the core schema; the in-process API fills it in. */
  strictSchemas?: boolean;
  /** Insert at the front of the collection order (the mutate-between-pages fault). */
  atFront?: boolean;
}

function versionOf(r: ScimResource): number {
  const m = /\d+/.exec(r.meta?.version ?? '');
  return m ? Number(m[0]) : 0;
}

/** Server rules that differ between real servers (see quirks.ts). */
export interface StoreRules {
  /** userName uniqueness compared case-exactly (default: case-insensitively, as RFC 7643 says). */
  caseSensitiveUserName?: boolean;
  /** Every e-mail needs a type, unique within the user. */
  uniqueEmailTypes?: boolean;
}

export class SimStore {
  /** Origin used in meta.location and member $ref; set by the server once it listens. */
  baseUrl = '';
  private readonly rules: StoreRules;
  private readonly userCol: ResourceCollection<ScimUser>;
  private readonly groupCol = new ResourceCollection<ScimGroup>([
    { attr: 'displayName', caseInsensitive: true, unique: true },
    { attr: 'externalId', caseInsensitive: false, unique: false },
  ]);
  /** userId → ids of the groups it belongs to (for `groups` and cascade on delete). */
  private readonly memberOf = new Map<string, Set<string>>();

  constructor(rules: StoreRules = {}) {
    this.rules = rules;
    this.userCol = new ResourceCollection<ScimUser>([
      { attr: 'userName', caseInsensitive: true, unique: true, uniqueCaseExact: rules.caseSensitiveUserName === true },
      { attr: 'externalId', caseInsensitive: false, unique: false },
      { attr: 'displayName', caseInsensitive: true, unique: false },
    ]);
  }

  /** Collections by SCIM endpoint name, for the generic list route. */
  collection(type: 'Users'): ResourceCollection<ScimUser>;
  collection(type: 'Groups'): ResourceCollection<ScimGroup>;
  collection(type: 'Users' | 'Groups'): ResourceCollection<ScimUser> | ResourceCollection<ScimGroup>;
  collection(type: 'Users' | 'Groups'): ResourceCollection<ScimUser> | ResourceCollection<ScimGroup> {
    return type === 'Users' ? this.userCol : this.groupCol;
  }

  users(): ScimUser[] {
    return [...this.userCol.all()];
  }

  groups(): ScimGroup[] {
    return [...this.groupCol.all()];
  }

  getUser(id: string): ScimUser | undefined {
    return this.userCol.get(id);
  }

  getGroup(id: string): ScimGroup | undefined {
    return this.groupCol.get(id);
  }

  getUserByUserName(userName: string): ScimUser | undefined {
    return this.userCol.lookup('userName', userName)?.[0];
  }

  getGroupByDisplayName(displayName: string): ScimGroup | undefined {
    return this.groupCol.lookup('displayName', displayName)?.[0];
  }

  counts(): { users: number; groups: number } {
    return { users: this.userCol.size, groups: this.groupCol.size };
  }

  /** Ids of the groups a user is a member of. */
  groupIdsOf(userId: string): string[] {
    return [...(this.memberOf.get(userId) ?? [])];
  }

  createUser(resource: Partial<ScimUser> | Record<string, unknown>, opts: WriteOptions = {}): ScimUser {
    const body = normalizeUser(resource, opts.strictSchemas ?? false);
    if (this.rules.uniqueEmailTypes) checkUniqueEmailTypes(body);
    if (this.userCol.uniqueConflict(body))
      throw new ScimHttpError(409, `userName ${String(body['userName'])} already exists`, 'uniqueness');
    const user = { ...body, id: randomUUID() } as ScimUser;
    user.meta = this.newMeta('User', 'Users', user.id);
    this.userCol.insert(user, opts.atFront);
    return user;
  }

  createGroup(resource: Partial<ScimGroup> | Record<string, unknown>, opts: WriteOptions = {}): ScimGroup {
    const body = normalizeGroup(resource, opts.strictSchemas ?? false);
    if (this.groupCol.uniqueConflict(body))
      throw new ScimHttpError(409, `group ${String(body['displayName'])} already exists`, 'uniqueness');
    const id = randomUUID();
    if (body['members'] !== undefined) body['members'] = this.resolveMembers(body['members'] as ScimMember[]);
    const group = { ...body, id } as ScimGroup;
    group.meta = this.newMeta('Group', 'Groups', id);
    this.groupCol.insert(group, opts.atFront);
    this.linkMembers(id, [], group.members ?? []);
    return group;
  }

  /** Full replace (PUT, and PATCH after the operations were applied): id and meta.created survive. */
  replaceUser(id: string, resource: unknown, opts: WriteOptions = {}): ScimUser {
    const user = this.userCol.get(id);
    if (!user) throw notFound(`User ${id}`);
    const body = normalizeUser(resource, opts.strictSchemas ?? false);
    if (this.rules.uniqueEmailTypes) checkUniqueEmailTypes(body);
    if (this.userCol.uniqueConflict(body, id))
      throw new ScimHttpError(409, `userName ${String(body['userName'])} already exists`, 'uniqueness');
    this.userCol.replaceContent(user, { ...body, id, meta: this.bumpMeta(user) });
    return user;
  }

  replaceGroup(id: string, resource: unknown, opts: WriteOptions = {}): ScimGroup {
    const group = this.groupCol.get(id);
    if (!group) throw notFound(`Group ${id}`);
    const body = normalizeGroup(resource, opts.strictSchemas ?? false);
    if (this.groupCol.uniqueConflict(body, id))
      throw new ScimHttpError(409, `group ${String(body['displayName'])} already exists`, 'uniqueness');
    if (body['members'] !== undefined) body['members'] = this.resolveMembers(body['members'] as ScimMember[]);
    const before = group.members ?? [];
    this.groupCol.replaceContent(group, { ...body, id, meta: this.bumpMeta(group) });
    this.linkMembers(id, before, group.members ?? []);
    return group;
  }

  /** Shallow merge; a key set to undefined is removed. */
  updateUser(id: string, partial: Partial<ScimUser> | Record<string, unknown>): ScimUser {
    const user = this.userCol.get(id);
    if (!user) throw notFound(`User ${id}`);
    return this.replaceUser(id, { ...user, ...partial });
  }

  updateGroup(id: string, partial: Partial<ScimGroup> | Record<string, unknown>): ScimGroup {
    const group = this.groupCol.get(id);
    if (!group) throw notFound(`Group ${id}`);
    return this.replaceGroup(id, { ...group, ...partial });
  }

  deleteUser(id: string): boolean {
    const user = this.userCol.remove(id);
    if (!user) return false;
    for (const groupId of this.memberOf.get(id) ?? []) {
      const group = this.groupCol.get(groupId);
      if (!group?.members) continue;
      group.members = group.members.filter((m) => m.value !== id);
      group.meta = this.bumpMeta(group);
    }
    this.memberOf.delete(id);
    return true;
  }

  deleteGroup(id: string): boolean {
    const group = this.groupCol.remove(id);
    if (!group) return false;
    this.linkMembers(id, group.members ?? [], []);
    return true;
  }

  clear(): void {
    this.userCol.clear();
    this.groupCol.clear();
    this.memberOf.clear();
  }

  location(endpoint: 'Users' | 'Groups', id: string): string {
    return `${this.baseUrl}${SCIM_PREFIX}/${endpoint}/${id}`;
  }

  /** Members must be existing users (no nested groups); duplicates collapse; display and $ref are filled in. */
  private resolveMembers(members: ScimMember[]): ScimMember[] {
    const seen = new Set<string>();
    const out: ScimMember[] = [];
    for (const m of members) {
      if (seen.has(m.value)) continue;
      const user = this.userCol.get(m.value);
      if (!user) throw badValue(`member ${m.value} is not an existing user`);
      seen.add(m.value);
      out.push({
        value: m.value,
        display: m.display ?? user.displayName ?? user.userName,
        $ref: this.location('Users', m.value),
        ...(m.type ? { type: m.type } : {}),
      });
    }
    return out;
  }

  private linkMembers(groupId: string, before: ScimMember[], after: ScimMember[]): void {
    const now = new Set(after.map((m) => m.value));
    for (const m of before) if (!now.has(m.value)) this.memberOf.get(m.value)?.delete(groupId);
    for (const userId of now) {
      let set = this.memberOf.get(userId);
      if (!set) this.memberOf.set(userId, (set = new Set()));
      set.add(groupId);
    }
  }

  private newMeta(resourceType: string, endpoint: 'Users' | 'Groups', id: string): ScimResource['meta'] {
    const now = new Date().toISOString();
    return { resourceType, created: now, lastModified: now, location: this.location(endpoint, id), version: 'W/"1"' };
  }

  private bumpMeta(r: ScimResource): ScimResource['meta'] {
    return { ...r.meta, lastModified: new Date().toISOString(), version: `W/"${versionOf(r) + 1}"` };
  }
}
