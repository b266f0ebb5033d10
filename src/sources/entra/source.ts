/**
 * The Entra ID source: a token for the app (client secret, certificate or workload
 * identity), every user in scope (paged, only the selected properties), the selected groups
 * and their members, flattened — a complete DesiredState or an error. Nothing partial ever
 * leaves: a page that stays throttled, fails or arrives cut short, an expired credential or
 * a missing permission fails the read before the platform is touched. `changes(cursor)`
 * reads Graph delta queries on top (delta.ts).
 */
import { readFile } from 'node:fs/promises';
import type { Dispatcher } from 'undici';
import type { Logger } from 'pino';
import { resolveConfigPath } from '../../config/paths.ts';
import type { Secret } from '../../config/secret.ts';
import { DuplicateIndex } from '../../identity/duplicates.ts';
import type { DesiredState, NormalizedUser, SourceRejection } from '../../identity/model.ts';
import { admitUser } from '../../identity/admit.ts';
import { SourceError, isSyncError } from '../../errors.ts';
import { createDispatcher } from '../../platform/dispatcher.ts';
import { logDirectoryRead } from '../source.ts';
import type { EntraContext } from './classify.ts';
import { createCredential, graphScope } from './credential.ts';
import type { ChangeMechanism, ChangeSource, SourceChanges, SourceDelta } from '../changes.ts';
import { decodeCursor, encodeCursor, readDelta, startDelta, type DeltaInput, type DeltaRound } from './delta.ts';
import { GraphClient } from './graph.ts';
import { getGroup, listMembers, memberKind, readGroups } from './groups.ts';
import { mapGraphUser, userSelect, type GraphUser } from './map.ts';
import { permissionsFor, type EntraIdSourceConfig } from './schema.ts';

export interface EntraSourceContext {
  configDir: string;
  logger?: Pick<Logger, 'info' | 'warn' | 'debug'> | undefined;
  /** File contents the config loader already read, by key (`credential.clientSecretFile`, `caFile`…). */
  secrets?: ReadonlyMap<string, Secret> | undefined;
}

export class EntraIdSource implements ChangeSource {
  readonly describe: string;
  private readonly config: EntraIdSourceConfig;
  private readonly ctx: EntraSourceContext;
  private readonly classify: EntraContext;
  private dispatcher: Dispatcher | undefined;
  private stats: Record<string, number> = {};
  private lastNested: string[] = [];
  /** The user scope of the last complete read (updated by each round): members of a changed group are kept within it. */
  private scope: { userIds: Set<string>; rejectedUserIds: Set<string> } | undefined;

  constructor(config: EntraIdSourceConfig, ctx: EntraSourceContext) {
    this.config = config;
    this.ctx = ctx;
    this.describe = `entra-id:${config.tenantId} app ${config.clientId}`;
    this.classify = {
      tenantId: config.tenantId,
      clientId: config.clientId,
      credential: config.credential.type,
      permissions: permissionsFor(config),
    };
  }

  async read(signal?: AbortSignal): Promise<DesiredState> {
    const started = performance.now();
    const graph = await this.open(signal);
    const c = this.config;
    const stats: Record<string, number> = { userPages: 0, usersRead: 0, usersInactive: 0, usersOutsideAssignment: 0, retries: 0 };
    this.stats = stats;
    const assigned = c.users.assignedGroups ? await this.assignedUsers(graph) : undefined;
    const rejected: SourceRejection[] = [];
    const users: NormalizedUser[] = [];
    const index = new DuplicateIndex<number>('userName', (at) => {
      const u = users[at] as NormalizedUser;
      return { ref: u.userName, name: u.userName };
    });
    const rejectedIds = new Set<string>();
    const select = userSelect(c);
    const filter = c.users.filter ? `&$filter=${encodeURIComponent(c.users.filter)}&$count=true` : '';
    const seen = new Set<string>();
    stats['userPages'] = (
      await graph.listAll<GraphUser>(
        `/v1.0/users?$select=${select.join(',')}&$top=${c.pageSize}${filter}`,
        'users',
        (page) => {
          for (const raw of page) {
            stats['usersRead'] = (stats['usersRead'] ?? 0) + 1;
            const id = typeof raw['id'] === 'string' ? raw['id'] : undefined;
            if (id !== undefined && seen.has(id)) continue; // a user listed twice across pages
            if (id !== undefined) seen.add(id);
            if (assigned && id !== undefined && !assigned.has(id)) {
              stats['usersOutsideAssignment'] = (stats['usersOutsideAssignment'] ?? 0) + 1;
              continue;
            }
            const m = mapGraphUser(raw, c.users.select);
            const checked = m.ok ? admitUser(m.value, index, users.length) : m;
            if (!checked.ok) {
              const upn = typeof raw['userPrincipalName'] === 'string' ? raw['userPrincipalName'].trim() : '';
              // With the identity still readable, so the planner protects that account (reconcile.md).
              rejected.push({
                kind: 'user',
                ref: upn || id || '(unknown user)',
                reason: checked.reason,
                ...(id !== undefined && id !== '' ? { externalId: id } : {}),
                ...(upn !== '' ? { userName: upn } : {}),
              });
              if (id !== undefined) rejectedIds.add(id);
              continue;
            }
            users.push(checked.value);
            if (!checked.value.active) stats['usersInactive'] = (stats['usersInactive'] ?? 0) + 1;
          }
        },
        // The filter may be an advanced query (ne, endswith, not…): eventual consistency covers both kinds.
        { eventual: c.users.filter !== undefined },
      )
    ).pages;
    if (users.length === 0 && !c.allowEmpty) {
      throw new SourceError(
        `${this.describe}: /users${c.users.filter ? ` with filter ${JSON.stringify(c.users.filter)}` : ''}${assigned ? ' within users.assignedGroups' : ''} returned no usable users (${stats['usersRead']} listed, ${rejected.length} rejected): refusing an empty directory (set allowEmpty: true if that is intended)`,
      );
    }
    this.scope = { userIds: new Set(users.map((u) => u.externalId)), rejectedUserIds: new Set(rejectedIds) };
    let groups: DesiredState['groups'] = [];
    if (c.groups !== false) {
      const g = await readGroups({
        graph,
        spec: c.groups,
        pageSize: c.pageSize,
        concurrency: c.concurrency,
        userIds: new Set(users.map((u) => u.externalId)),
        rejectedUserIds: rejectedIds,
        rejected,
      });
      groups = g.groups;
      this.lastNested = g.nestedGroupIds;
      Object.assign(stats, g.stats);
    }
    return logDirectoryRead(this.ctx.logger, this.describe, 'Entra ID directory read', started, { users, groups, rejected, stats });
  }

  /**
   * Graph delta queries. None with `users.filter` or `users.assignedGroups`: users/delta
   * takes neither, so a round could report users outside the configured scope.
   */
  changeMechanism(): ChangeMechanism | undefined {
    if (this.config.users.filter !== undefined || this.config.users.assignedGroups !== undefined) return undefined;
    return {
      name: 'graph-delta',
      pollIntervalMs: 60_000,
      blindSpots: [
        'a change to a nested group (members of a group inside a group): answered by a full read',
        'groups.filter: a group that stops or starts matching the filter without a member change',
      ],
    };
  }

  /**
   * What changed since `cursor` (Graph delta queries); each group whose members changed is
   * read whole. No cursor, an expired one, or a change to nested groups: a full read with a
   * fresh cursor. Keep the returned cursor for the next call.
   */
  async changes(cursor: string | undefined, signal?: AbortSignal): Promise<SourceChanges> {
    const graph = await this.open(signal);
    const d: DeltaInput = { graph, config: this.config, select: userSelect(this.config), extra: this.config.users.select };
    if (this.changeMechanism() === undefined)
      return await this.fullWithCursor(d, signal, 'mechanism unavailable', 'users.filter or users.assignedGroups is set');
    if (cursor !== undefined) {
      try {
        const r = await readDelta(d, decodeCursor(cursor, graph));
        if (r.kind !== 'delta') return await this.fullWithCursor(d, signal, 'cannot apply alone', 'nesting changed');
        const complete = await this.completeGroups(graph, r);
        if (complete !== undefined) return complete;
        return await this.fullWithCursor(
          d,
          signal,
          'cannot apply alone',
          'a group changed and the user scope of the last read is not in memory',
        );
      } catch (e) {
        if (!(isSyncError(e) && e.status === 410)) throw e;
        this.ctx.logger?.warn({ source: this.describe }, 'Entra delta token expired (410): reading in full');
        return await this.fullWithCursor(d, signal, 'cursor expired');
      }
    }
    return await this.fullWithCursor(d, signal, 'no cursor');
  }

  /** A token, then one user: proves tenant, app, credential, consent and User.Read.All. */
  async check(signal?: AbortSignal): Promise<string> {
    const graph = await this.open(signal);
    await graph.token();
    const data = await graph.get('/v1.0/users?$select=id,userPrincipalName&$top=1', 'users (probe)');
    const first = (data['value'] as Array<{ userPrincipalName?: string }> | undefined)?.[0]?.userPrincipalName;
    if (this.config.groups !== false) await graph.get('/v1.0/groups?$select=id&$top=1', 'groups (probe)');
    if (first === undefined && !this.config.allowEmpty)
      throw new SourceError(`${this.describe}: token obtained, but /users returned no users: check tenantId`);
    const roles = graph.roles();
    return `token for app ${this.config.clientId} (${this.config.credential.type}${roles ? `; permissions: ${roles.join(', ') || 'none'}` : ''}); /users returned ${first ?? 'no users'}`;
  }

  async close(): Promise<void> {
    const d = this.dispatcher;
    this.dispatcher = undefined;
    await d?.close();
  }

  private async fullWithCursor(
    d: DeltaInput,
    signal: AbortSignal | undefined,
    reason: 'no cursor' | 'cursor expired' | 'cannot apply alone' | 'mechanism unavailable',
    detail?: string,
  ): Promise<SourceChanges> {
    // Links first: whatever changes while the full read runs shows up in the next round.
    const links = await startDelta(d);
    const state = await this.read(signal);
    return { kind: 'full', reason, ...(detail ? { detail } : {}), state, cursor: encodeCursor({ ...links, nested: this.lastNested }) };
  }

  /**
   * The round as a SourceDelta: every group whose members changed read whole (its complete
   * member list within the user scope of the last read). Undefined when a group changed and
   * that scope is not in memory (after a restart).
   */
  private async completeGroups(graph: GraphClient, r: DeltaRound): Promise<SourceDelta | undefined> {
    const scope = this.scope;
    if (scope) {
      for (const u of r.users.upserted) {
        scope.userIds.add(u.externalId);
        scope.rejectedUserIds.delete(u.externalId);
      }
      for (const id of r.users.removed) scope.userIds.delete(id);
      for (const x of r.rejected) if (x.externalId !== undefined) scope.rejectedUserIds.add(x.externalId);
    }
    const delta: SourceDelta = {
      kind: 'delta',
      cursor: r.cursor,
      users: r.users,
      groups: { upserted: [], removed: r.groups.removed },
      rejected: r.rejected,
      changedAt: {},
    };
    const spec = this.config.groups;
    const removed = new Set(r.groups.removed);
    let ids = r.groups.changed.map((g) => g.externalId).filter((id) => !removed.has(id));
    if (spec === false || ids.length === 0) return delta;
    if (scope === undefined) return undefined;
    if (spec.filter !== undefined) {
      // groups/delta takes no $filter: keep the changed groups the filter selects.
      const selected = new Set<string>();
      await graph.listAll<{ id?: unknown }>(
        `/v1.0/groups?$select=id&$top=${this.config.pageSize}&$filter=${encodeURIComponent(spec.filter)}`,
        'groups',
        (items) => {
          for (const g of items) if (typeof g.id === 'string') selected.add(g.id);
        },
      );
      ids = ids.filter((id) => selected.has(id));
      if (ids.length === 0) return delta;
    }
    const g = await readGroups({
      graph,
      spec: { ...spec, filter: undefined, ids },
      pageSize: this.config.pageSize,
      concurrency: this.config.concurrency,
      userIds: scope.userIds,
      rejectedUserIds: scope.rejectedUserIds,
      rejected: delta.rejected,
    });
    delta.groups.upserted = g.groups;
    return delta;
  }

  /** Users (transitively) in users.assignedGroups: the app's "assigned users and groups". */
  private async assignedUsers(graph: GraphClient): Promise<Set<string>> {
    const out = new Set<string>();
    for (const id of this.config.users.assignedGroups ?? []) {
      await getGroup(graph, id, 'users.assignedGroups');
      const { members } = await listMembers(graph, id, true, this.config.pageSize);
      for (const m of members) if (memberKind(m) === 'user' && typeof m.id === 'string') out.add(m.id);
    }
    return out;
  }

  private async open(signal?: AbortSignal): Promise<GraphClient> {
    const c = this.config;
    const ca = c.caFile !== undefined ? await this.file('caFile', c.caFile) : undefined;
    this.dispatcher ??= createDispatcher({
      connections: c.concurrency + 2,
      headersTimeoutMs: c.timeoutSeconds * 1000,
      bodyTimeoutMs: c.timeoutSeconds * 1000,
      ...(ca !== undefined ? { tls: { ca } } : {}),
    });
    const cred = c.credential;
    const secret =
      cred.type === 'clientSecret'
        ? (await this.file('credential.clientSecretFile', cred.clientSecretFile)).replace(/\r?\n$/, '')
        : cred.type === 'certificate'
          ? await this.file('credential.certificateFile', cred.certificateFile)
          : undefined;
    if (cred.type === 'certificate' && !/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(secret ?? ''))
      throw new SourceError(
        `credential.certificateFile has no PEM private key: it must hold the key and the certificate (PEM), e.g. cat key.pem cert.pem`,
      );
    const credential = await createCredential({ config: c, secret, dispatcher: this.dispatcher });
    return new GraphClient({
      graphUrl: c.graphUrl,
      authorityHost: c.authorityHost,
      scope: graphScope(c.graphUrl),
      credential,
      dispatcher: this.dispatcher,
      timeoutMs: c.timeoutSeconds * 1000,
      policy: {
        maxAttempts: c.retry.maxAttempts,
        baseDelayMs: c.retry.baseDelayMs,
        maxDelayMs: c.retry.maxDelayMs,
        maxRetryAfterMs: c.retry.maxDelayMs,
      },
      ctx: this.classify,
      signal,
      onRetry: (what, attempt, delayMs, reason) => {
        this.stats['retries'] = (this.stats['retries'] ?? 0) + 1;
        this.ctx.logger?.warn({ source: this.describe, what, attempt, delayMs, reason }, 'Graph throttled or failing; backing off');
      },
    });
  }

  /** A file the loader read (by key), or read now (a rotated secret is picked up on the next run). */
  private async file(key: string, rel: string): Promise<string> {
    const loaded = this.ctx.secrets?.get(key)?.reveal();
    if (loaded !== undefined) return loaded;
    const path = resolveConfigPath(this.ctx.configDir, rel);
    try {
      return await readFile(path, 'utf8');
    } catch (e) {
      throw new SourceError(`${key}: cannot read ${path} (${(e as { code?: string }).code ?? 'error'})`);
    }
  }
}
