/**
 * From the admin events (reports.ts) to a SourceDelta: each user and group an event names is
 * read again from the Directory API, whole, within the configured scope.
 *
 * - A user found within `users.query` (and the domain): upserted as `read()` maps it.
 * - A user that exists but is outside the scope now (moved to another org unit…): removed.
 * - A user that no longer exists: removed, its id found among the deleted users
 *   (users.list showDeleted=true), since the event names only its address.
 * - A changed group within the scope: its members read and flattened as `read()` does,
 *   against the user scope of the last complete read kept in memory; one outside
 *   `groups.query`: removed (a no-op for a group never provisioned).
 *
 * What cannot be decided alone is left to a full read: a deleted group (the event names
 * only its address), a group nested in another (the change reaches its parents), a group
 * change when the user scope is not in memory (after a restart).
 */
import type { admin_directory_v1 } from '@googleapis/admin';
import type { NormalizedGroup, NormalizedUser, SourceRejection } from '../../identity/model.ts';
import { validateUser } from '../../identity/validate-user.ts';
import { emptyDelta, type SourceDelta } from '../changes.ts';
import { readGroups } from './groups.ts';
import { USER_FIELDS, mapGoogleUser, type GoogleUser } from './map.ts';
import { callApi, listAll, type CallEnv } from './paged.ts';
import type { AdminChanges } from './reports.ts';
import type { GoogleWorkspaceSourceConfig } from './schema.ts';

/** The user scope of the last complete read (updated by each delta). */
export interface GoogleScope {
  userIds: Set<string>;
  rejectedUserIds: Set<string>;
}

export interface DeltaInput {
  directory: admin_directory_v1.Admin;
  env: CallEnv;
  config: GoogleWorkspaceSourceConfig;
  where: { customer: string } | { domain: string };
  callOptions: { retry: false; timeout: number; signal?: AbortSignal };
  scope: GoogleScope | undefined;
}

/**
 * Users named by events that are read one by one (1–3 requests each) before a full read is
 * cheaper: a full read lists 500 users a request.
 */
export const MAX_USERS_READ_ALONE = 1_000;

export type GoogleDeltaResult = { kind: 'delta'; delta: SourceDelta } | { kind: 'cannot apply alone'; detail: string };

/** A Directory search clause matching one address (quoted as the search syntax wants). */
function emailClause(email: string): string {
  return email.includes("'") ? `email:"${email}"` : `email:'${email}'`;
}

const notFound = (e: unknown): boolean => (e as { status?: number }).status === 404;

export async function readGoogleDelta(d: DeltaInput, events: AdminChanges): Promise<GoogleDeltaResult> {
  const c = d.config;
  const delta = emptyDelta(events.cursor);
  const mask = c.users.customSchemas;
  const upserted = new Map<string, NormalizedUser>();
  const removed = new Map<string, number>();
  const rejected: SourceRejection[] = [];
  let deletedUsers: GoogleUser[] | undefined;

  const named = new Map([...events.users, ...events.deletedUsers]);
  if (named.size > MAX_USERS_READ_ALONE)
    return { kind: 'cannot apply alone', detail: `${named.size} users changed: one full read costs less than reading each` };
  for (const [email, at] of named) {
    const inScope: GoogleUser[] = [];
    await listAll<GoogleUser>(
      `users.list ${email}`,
      'users',
      (pageToken) =>
        d.directory.users.list(
          {
            ...d.where,
            query: [c.users.query, emailClause(email)].filter(Boolean).join(' '),
            maxResults: 500,
            projection: mask.length > 0 ? 'custom' : 'basic',
            ...(mask.length > 0 ? { customFieldMask: mask.join(',') } : {}),
            ...(pageToken ? { pageToken } : {}),
            fields: `nextPageToken,users(${USER_FIELDS})`,
          },
          d.callOptions,
        ),
      d.env,
      (page) => inScope.push(...page),
    );
    for (const raw of inScope) {
      const m = mapGoogleUser(raw);
      const checked = m.ok ? validateUser(m.value) : m;
      if (!checked.ok) {
        rejected.push({
          kind: 'user',
          ref: raw.primaryEmail ?? raw.id ?? email,
          reason: checked.reason,
          ...(typeof raw.id === 'string' && raw.id !== '' ? { externalId: raw.id } : {}),
          ...(typeof raw.primaryEmail === 'string' && raw.primaryEmail.trim() !== '' ? { userName: raw.primaryEmail.trim() } : {}),
        });
        continue;
      }
      upserted.set(checked.value.externalId, checked.value);
      delta.changedAt[checked.value.externalId] = Math.max(delta.changedAt[checked.value.externalId] ?? 0, at);
    }
    if (inScope.length > 0 && !events.deletedUsers.has(email)) continue;
    // Not within the scope: out of it now, or deleted (the address may since name someone new).
    if (!events.deletedUsers.has(email)) {
      try {
        const u = await callApi(
          `users.get ${email}`,
          () => d.directory.users.get({ userKey: email, fields: 'id,primaryEmail' }, d.callOptions),
          d.env,
        );
        if (typeof u['id'] === 'string') removed.set(u['id'], at);
        continue;
      } catch (e) {
        if (!notFound(e)) throw e;
      }
    }
    deletedUsers ??= await listDeleted(d);
    for (const u of deletedUsers)
      if (typeof u.id === 'string' && u.primaryEmail?.toLowerCase() === email) removed.set(u.id, Math.max(removed.get(u.id) ?? 0, at));
  }
  for (const id of upserted.keys()) removed.delete(id);
  delta.users.upserted = [...upserted.values()];
  delta.users.removed = [...removed.keys()];
  for (const [id, at] of removed) delta.changedAt[id] = at;
  delta.rejected = rejected;
  if (d.scope) {
    for (const u of delta.users.upserted) {
      d.scope.userIds.add(u.externalId);
      d.scope.rejectedUserIds.delete(u.externalId);
    }
    for (const id of delta.users.removed) d.scope.userIds.delete(id);
    for (const r of rejected) if (r.externalId !== undefined) d.scope.rejectedUserIds.add(r.externalId);
  }

  if (c.groups !== false && (events.groups.size > 0 || events.deletedGroups.size > 0)) {
    const groupsSpec = c.groups;
    const wanted = (email: string): boolean => groupsSpec.emails === undefined || groupsSpec.emails.some((e) => e.toLowerCase() === email);
    for (const email of events.deletedGroups.keys())
      if (wanted(email)) return { kind: 'cannot apply alone', detail: `group ${email} was deleted (its id is not in the event)` };
    if (d.scope === undefined)
      return { kind: 'cannot apply alone', detail: 'a group changed and the user scope of the last read is not in memory' };
    const scope = d.scope;
    const changed: string[] = [];
    for (const email of events.groups.keys()) {
      if (!wanted(email)) continue;
      const found: admin_directory_v1.Schema$Group[] = [];
      await listAll<admin_directory_v1.Schema$Group>(
        `groups.list ${email}`,
        'groups',
        (pageToken) =>
          d.directory.groups.list(
            {
              ...d.where,
              query: [groupsSpec.query, emailClause(email)].filter(Boolean).join(' '),
              ...(pageToken ? { pageToken } : {}),
              fields: 'nextPageToken,groups(id,email,name)',
            },
            d.callOptions,
          ),
        d.env,
        (page) => found.push(...page),
      );
      const g = found.find((x) => x.email?.toLowerCase() === email) ?? found[0];
      if (g === undefined) {
        // Outside groups.query (now, or always): gone from the source, like a user outside users.query.
        try {
          const other = await callApi(
            `groups.get ${email}`,
            () => d.directory.groups.get({ groupKey: email, fields: 'id' }, d.callOptions),
            d.env,
          );
          if (typeof other['id'] === 'string') {
            delta.groups.removed.push(other['id']);
            delta.changedAt[other['id']] = events.groups.get(email) ?? 0;
          }
          continue;
        } catch (e) {
          if (!notFound(e)) throw e;
          return { kind: 'cannot apply alone', detail: `group ${email} changed and no longer exists (its id is not in the event)` };
        }
      }
      if (groupsSpec.flattenNested) {
        const parents: unknown[] = [];
        await listAll(
          `groups.list userKey=${email}`,
          'groups',
          (pageToken) =>
            d.directory.groups.list(
              { userKey: email, ...(pageToken ? { pageToken } : {}), fields: 'nextPageToken,groups(id)' },
              d.callOptions,
            ),
          d.env,
          (page) => parents.push(...page),
        );
        if (parents.length > 0) return { kind: 'cannot apply alone', detail: `group ${email} is nested in another group` };
      }
      changed.push(g.email ?? email);
      if (typeof g.id === 'string') delta.changedAt[g.id] = events.groups.get(email) ?? 0;
    }
    if (changed.length > 0) {
      const g = await readGroups({
        directory: d.directory,
        env: d.env,
        spec: { ...d.where, emails: changed, flattenNested: groupsSpec.flattenNested },
        timeoutMs: c.timeoutSeconds * 1000,
        concurrency: c.concurrency,
        userIds: scope.userIds,
        rejectedUserIds: scope.rejectedUserIds,
        rejected: delta.rejected,
      });
      delta.groups.upserted = g.groups satisfies NormalizedGroup[];
    }
  }
  return { kind: 'delta', delta };
}

async function listDeleted(d: DeltaInput): Promise<GoogleUser[]> {
  const out: GoogleUser[] = [];
  await listAll<GoogleUser>(
    'users.list showDeleted',
    'users',
    (pageToken) =>
      d.directory.users.list(
        {
          ...d.where,
          showDeleted: 'true',
          maxResults: 500,
          ...(pageToken ? { pageToken } : {}),
          fields: 'nextPageToken,users(id,primaryEmail)',
        },
        d.callOptions,
      ),
    d.env,
    (page) => out.push(...page),
  );
  return out;
}
