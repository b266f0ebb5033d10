/**
 * The Okta source: every user in the configured statuses (GET /api/v1/users with a
 * `search`, which — unlike a plain list — includes DEPROVISIONED users), the selected
 * groups and their members — a complete DesiredState or an error. Nothing partial ever
 * leaves: a page that stays throttled, fails or arrives cut short fails the read before
 * the platform is touched. `changes(cursor)` reads what changed since a cursor
 * (`lastUpdated gt`) for the change-driven path (changes.ts' contract).
 */
import { readFile } from 'node:fs/promises';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { rootCertificates } from 'node:tls';
import type { Client } from '@okta/okta-sdk-nodejs';
import type { Logger } from 'pino';
import { resolveConfigPath } from '../../config/paths.ts';
import type { Secret } from '../../config/secret.ts';
import { DuplicateIndex } from '../../identity/duplicates.ts';
import type { DesiredState, NormalizedGroup, NormalizedUser, SourceRejection } from '../../identity/model.ts';
import { validateUser } from '../../identity/validate-user.ts';
import { ErrorCodes, SourceError, SyncError } from '../../errors.ts';
import { logDirectoryRead } from '../source.ts';
import type { ChangeMechanism, ChangeSource, SourceChanges } from '../changes.ts';
import { ROLE_PATH, SCOPE_PATH, oktaError, type OktaClassifyContext } from './classify.ts';
import { checkPrivateKey, createOktaClient, type OktaCredential } from './client.ts';
import { OktaCallError, type ExecutorOptions } from './executor.ts';
import { readGroups } from './groups.ts';
import { isoOf, mapOktaUser, type OktaUserLike } from './map.ts';
import { oktaScopesFor, type OktaSourceConfig } from './schema.ts';

export interface OktaSourceContext {
  configDir: string;
  logger?: Pick<Logger, 'info' | 'warn' | 'debug'> | undefined;
  /** File contents the config loader already read, by key (`apiTokenFile`, `privateKeyFile`). */
  secrets?: ReadonlyMap<string, Secret> | undefined;
}

const MAX_BODY_BYTES = 64 * 1024 * 1024;
const PAGE = 200;
/**
 * The first cursor after a full read is our clock before the read, this far back: Okta
 * stamps lastUpdated with its own clock. Changes re-reported within it are harmless
 * (an upsert of a complete record applies twice to the same result).
 */
export const OKTA_CLOCK_SKEW_MS = 60_000;

export const OKTA_CHANGE_MECHANISM: ChangeMechanism = {
  name: 'okta-last-updated',
  pollIntervalMs: 60_000,
  blindSpots: [
    'deleted users and groups (a deleted object is no longer listed)',
    'a user who stops matching users.search (found only by the full reconcile)',
    'a clock difference with Okta larger than one minute, for the first poll after a full read',
  ],
};

export class OktaSource implements ChangeSource {
  readonly describe: string;
  private readonly config: OktaSourceConfig;
  private readonly ctx: OktaSourceContext;
  private readonly scopes: string[];
  private readonly active: ReadonlySet<string>;
  private agents: { http: HttpAgent; https: HttpsAgent } | undefined;
  /** The user scope of the last complete read (updated by each change read): members of a changed group are kept within it. */
  private scope: { userIds: Set<string>; rejectedUserIds: Set<string> } | undefined;

  constructor(config: OktaSourceConfig, ctx: OktaSourceContext) {
    this.config = config;
    this.ctx = ctx;
    this.scopes = oktaScopesFor(config);
    this.active = new Set(config.users.activeStatuses);
    const host = (() => {
      try {
        return new URL(config.orgUrl).host;
      } catch {
        return config.orgUrl;
      }
    })();
    this.describe = `okta:${host}${config.clientId ? ` as ${config.clientId}` : ''}`;
  }

  async read(signal?: AbortSignal): Promise<DesiredState> {
    const started = performance.now();
    const stats: Record<string, number> = { usersRead: 0, usersInactive: 0, retries: 0, paced: 0 };
    const { client, classify } = await this.open(signal, stats);
    const rejected: SourceRejection[] = [];
    const c = this.config;
    const { users, rejectedIds } = await this.guard(classify, 'GET /api/v1/users', () =>
      this.readUsers(client, undefined, rejected, stats),
    );
    if (users.length === 0 && !c.allowEmpty)
      throw new SourceError(
        `${this.describe}: GET /api/v1/users with search ${JSON.stringify(this.userSearch(undefined))} returned no usable users (${stats['usersRead']} listed, ${rejected.length} rejected): refusing an empty directory (set allowEmpty: true if that is intended)`,
      );
    this.scope = { userIds: new Set(users.map((u) => u.externalId)), rejectedUserIds: new Set(rejectedIds) };
    let groups: NormalizedGroup[] = [];
    if (c.groups !== false) {
      const spec = { types: c.groups.types, search: c.groups.search, concurrency: c.groups.concurrency };
      const g = await this.guard(classify, 'GET /api/v1/groups', () =>
        readGroups(client, spec, new Set(users.map((u) => u.externalId)), rejectedIds, rejected),
      );
      groups = g.groups;
      Object.assign(stats, g.stats);
      if (g.stats.membersOutsideScope > 0)
        this.ctx.logger?.info(
          { source: this.describe, count: g.stats.membersOutsideScope },
          'group members outside the user scope skipped',
        );
    }
    return logDirectoryRead(this.ctx.logger, this.describe, 'Okta directory read', started, { users, groups, rejected, stats });
  }

  changeMechanism(): ChangeMechanism {
    return OKTA_CHANGE_MECHANISM;
  }

  /**
   * Users and groups changed after `cursor` (an ISO 8601 instant), by `search=lastUpdated gt`
   * on users and lastUpdated/lastMembershipUpdated on groups; each changed group with its
   * complete member list. A user whose status left users.statuses is removed. No cursor, one
   * that is not an instant, or a changed group while the user scope of the last read is not
   * in memory (a restart): a full read. All or nothing like `read()`.
   */
  async changes(cursor: string | undefined, signal?: AbortSignal): Promise<SourceChanges> {
    const full = async (reason: 'no cursor' | 'cursor expired' | 'cannot apply alone', detail?: string): Promise<SourceChanges> => {
      const started = new Date(Date.now() - OKTA_CLOCK_SKEW_MS).toISOString();
      return { kind: 'full', reason, ...(detail ? { detail } : {}), state: await this.read(signal), cursor: started };
    };
    if (cursor === undefined) return await full('no cursor');
    if (Number.isNaN(Date.parse(cursor))) return await full('cursor expired', 'not an ISO 8601 instant');
    const stats: Record<string, number> = { usersRead: 0, usersInactive: 0, retries: 0, paced: 0 };
    const { client, classify } = await this.open(signal, stats);
    const rejected: SourceRejection[] = [];
    const removed: string[] = [];
    const r = await this.guard(classify, 'GET /api/v1/users', () => this.readUsers(client, cursor, rejected, stats, removed));
    const scope = this.scope;
    if (scope) {
      for (const u of r.users) {
        scope.userIds.add(u.externalId);
        scope.rejectedUserIds.delete(u.externalId);
      }
      for (const id of removed) scope.userIds.delete(id);
      for (const x of rejected) if (x.externalId !== undefined) scope.rejectedUserIds.add(x.externalId);
    }
    let latest = r.latest;
    let groups: NormalizedGroup[] = [];
    const c = this.config;
    if (c.groups !== false) {
      const spec = { types: c.groups.types, search: c.groups.search, concurrency: c.groups.concurrency, changedSince: cursor };
      const g = await this.guard(classify, 'GET /api/v1/groups', () =>
        readGroups(client, spec, scope?.userIds ?? new Set(), scope?.rejectedUserIds ?? new Set(), rejected),
      );
      if (g.groups.length > 0 && scope === undefined)
        return await full('cannot apply alone', 'a group changed and the user scope of the last read is not in memory');
      groups = g.groups;
      if (g.latest !== undefined && (latest === undefined || Date.parse(g.latest) > Date.parse(latest))) latest = g.latest;
    }
    const changedAt: Record<string, number> = {};
    for (const u of r.users) if (r.updated.has(u.externalId)) changedAt[u.externalId] = r.updated.get(u.externalId) as number;
    return {
      kind: 'delta',
      cursor: latest ?? cursor,
      users: { upserted: r.users, removed },
      groups: { upserted: groups, removed: [] },
      rejected,
      changedAt,
    };
  }

  /** A token (service app) and one user, then one group: proves credential, scopes and admin role. */
  async check(signal?: AbortSignal): Promise<string> {
    const { client, classify } = await this.open(signal, {});
    const first = await this.guard(classify, 'GET /api/v1/users (probe)', async () => {
      const coll = await client.userApi.listUsers({ search: this.userSearch(undefined), limit: 1 });
      const page = await coll.next();
      return (page.value as OktaUserLike | null)?.profile?.['login'];
    });
    if (first === undefined && !this.config.allowEmpty)
      throw new SourceError(`${this.describe}: authenticated, but GET /api/v1/users returned no users: check orgUrl and users.search`);
    if (this.config.groups !== false) {
      const spec = this.config.groups;
      await this.guard(classify, 'GET /api/v1/groups (probe)', async () => {
        await (await client.groupApi.listGroups({ search: `type eq "${spec.types[0]}"`, limit: 1 })).next();
      });
    }
    const who =
      this.config.apiTokenFile !== undefined ? 'API token' : `service app ${this.config.clientId} (scopes: ${this.scopes.join(', ')})`;
    return `${who}; users${this.config.groups !== false ? ' and groups' : ''} readable; GET /api/v1/users returned ${String(first ?? 'no users')}`;
  }

  /** A change read lists every status: a user whose status left users.statuses is a removal. */
  private userSearch(since: string | undefined): string {
    const u = this.config.users;
    const parts = since === undefined ? [`(${u.statuses.map((s) => `status eq "${s}"`).join(' or ')})`] : [];
    if (u.search) parts.push(`(${u.search})`);
    if (since !== undefined) parts.push(`lastUpdated gt "${since}"`);
    return parts.join(' and ');
  }

  private async readUsers(
    client: Client,
    since: string | undefined,
    rejected: SourceRejection[],
    stats: Record<string, number>,
    /** Change reads: ids of users listed with a status outside users.statuses. */
    removed?: string[],
  ): Promise<{ users: NormalizedUser[]; rejectedIds: Set<string>; latest: string | undefined; updated: Map<string, number> }> {
    const users: NormalizedUser[] = [];
    const rejectedIds = new Set<string>();
    const index = new DuplicateIndex<number>('userName', (at) => {
      const u = users[at] as NormalizedUser;
      return { ref: u.userName, name: u.userName };
    });
    let latest: string | undefined;
    const updated = new Map<string, number>();
    const statuses = new Set<string>(this.config.users.statuses);
    const coll = await client.userApi.listUsers({ search: this.userSearch(since), limit: PAGE });
    for await (const item of coll) {
      const raw = item as unknown as OktaUserLike | null;
      if (!raw) continue;
      stats['usersRead'] = (stats['usersRead'] ?? 0) + 1;
      const t = isoOf(raw.lastUpdated);
      if (t !== undefined && (latest === undefined || Date.parse(t) > Date.parse(latest))) latest = t;
      if (t !== undefined && typeof raw.id === 'string') updated.set(raw.id, Date.parse(t));
      if (removed !== undefined && typeof raw.id === 'string' && !statuses.has(String(raw.status))) {
        removed.push(raw.id);
        continue;
      }
      const m = mapOktaUser(raw, this.active);
      if (m.ok && index.hasId(m.value.externalId)) continue; // listed twice across pages
      const checked = m.ok ? validateUser(m.value) : m;
      const reason =
        checked.ok && m.ok ? index.reason(checked.value.externalId, m.value.userName) : checked.ok ? undefined : checked.reason;
      if (reason !== undefined || !checked.ok) {
        const login = typeof raw.profile?.['login'] === 'string' ? (raw.profile['login'] as string).trim() : '';
        rejected.push({
          kind: 'user',
          ref: login || raw.id || '(unknown user)',
          reason: reason ?? 'unreadable',
          ...(typeof raw.id === 'string' && raw.id !== '' ? { externalId: raw.id } : {}),
          ...(login !== '' ? { userName: login } : {}),
        });
        if (typeof raw.id === 'string') rejectedIds.add(raw.id);
        continue;
      }
      index.add(checked.value.externalId, checked.value.userName, users.length);
      users.push(checked.value);
      if (!checked.value.active) stats['usersInactive'] = (stats['usersInactive'] ?? 0) + 1;
    }
    return { users, rejectedIds, latest, updated };
  }

  /** Run one listing; any failure leaves classified, naming the page it happened on. */
  private async guard<T>(classify: Omit<OktaClassifyContext, 'what'>, what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      if (e instanceof OktaCallError && e.path.endsWith('/oauth2/v1/token')) throw await this.diagnoseToken(e, classify);
      // A listing's failure names the request and page: `GET /api/v1/users page 7`.
      const where = e instanceof OktaCallError && !what.includes('probe') ? `GET ${e.path} page ${e.page}` : what;
      throw oktaError(e, { ...classify, what: where });
    }
  }

  /** invalid_scope names no scope: ask for each scope alone to tell which one is not granted. */
  private async diagnoseToken(e: OktaCallError, classify: Omit<OktaClassifyContext, 'what'>): Promise<SyncError> {
    const first = oktaError(e, { ...classify, what: 'POST /oauth2/v1/token' });
    if (first.detail !== 'invalid_scope' || this.scopes.length < 2) return first;
    const missing: string[] = [];
    for (const scope of this.scopes) {
      try {
        const { client } = await createOktaClient(this.config.orgUrl, { ...(await this.credential()), scopes: [scope] } as OktaCredential, {
          ...this.executorOptions(undefined, {}),
          agent: await this.agent(),
        });
        await (client as unknown as { oauth: { getAccessToken(): Promise<unknown> } }).oauth.getAccessToken();
      } catch {
        missing.push(scope);
      }
    }
    if (missing.length === 0 || missing.length === this.scopes.length) return first;
    return new SyncError(
      ErrorCodes.AUTH_FORBIDDEN,
      'fatal',
      `Okta refused a token for service app ${this.config.clientId}: the app is not granted ${missing.join(', ')}. Fix: ${SCOPE_PATH} ${missing.join(' and ')} (and assign an admin role: ${ROLE_PATH})`,
      { cause: first.cause, detail: 'invalid_scope' },
    );
  }

  private executorOptions(signal: AbortSignal | undefined, stats: Record<string, number>): ExecutorOptions {
    const c = this.config;
    return {
      origin: new URL(c.orgUrl).origin,
      policy: {
        maxAttempts: c.retry.maxAttempts,
        baseDelayMs: c.retry.baseDelayMs,
        maxDelayMs: c.retry.maxDelayMs,
        maxRetryAfterMs: c.retry.maxDelayMs,
      },
      reserve: c.rateLimitReserve,
      timeoutMs: c.timeoutSeconds * 1000,
      maxBodyBytes: MAX_BODY_BYTES,
      signal,
      onPace: (p) => {
        stats['paced'] = (stats['paced'] ?? 0) + 1;
        this.ctx.logger?.info({ source: this.describe, ...p }, 'Okta rate limit nearly used up; waiting for the window to reset');
      },
      onRetry: (path, attempt, delayMs, reason) => {
        stats['retries'] = (stats['retries'] ?? 0) + 1;
        this.ctx.logger?.warn({ source: this.describe, path, attempt, delayMs, reason }, 'Okta API throttled or failing; backing off');
      },
    };
  }

  private async open(
    signal: AbortSignal | undefined,
    stats: Record<string, number>,
  ): Promise<{ client: Client; classify: Omit<OktaClassifyContext, 'what'> }> {
    const cred = await this.credential();
    const classify = { orgUrl: this.config.orgUrl, mode: cred.mode, clientId: this.config.clientId, scopes: this.scopes };
    const opts = { ...this.executorOptions(signal, stats), agent: await this.agent() };
    const { client } = await createOktaClient(this.config.orgUrl, cred, opts);
    return { client, classify };
  }

  /** Keep-alive connections for the whole read; `caFile` added to the system CAs. */
  private async agent(): Promise<(url: URL) => HttpAgent> {
    if (!this.agents) {
      const c = this.config;
      let ca: string[] | undefined;
      if (c.caFile !== undefined) ca = [...rootCertificates, await this.secretFile('caFile', c.caFile)];
      this.agents = {
        http: new HttpAgent({ keepAlive: true, maxSockets: 16 }),
        https: new HttpsAgent({ keepAlive: true, maxSockets: 16, ...(ca ? { ca } : {}) }),
      };
    }
    const a = this.agents;
    return (url) => (url.protocol === 'http:' ? a.http : a.https);
  }

  async close(): Promise<void> {
    this.agents?.http.destroy();
    this.agents?.https.destroy();
    this.agents = undefined;
  }

  private async credential(): Promise<OktaCredential> {
    const c = this.config;
    if (c.apiTokenFile !== undefined) {
      const token = (await this.secretFile('apiTokenFile', c.apiTokenFile)).trim();
      if (token === '' || /\s/.test(token))
        throw new SourceError(`apiTokenFile ${resolveConfigPath(this.ctx.configDir, c.apiTokenFile)} does not hold one API token`);
      return { mode: 'token', token };
    }
    const path = resolveConfigPath(this.ctx.configDir, c.privateKeyFile as string);
    const privateKey = checkPrivateKey(await this.secretFile('privateKeyFile', c.privateKeyFile as string), path);
    return { mode: 'oauth', clientId: c.clientId as string, privateKey, keyId: c.keyId, scopes: this.scopes };
  }

  private async secretFile(key: string, rel: string): Promise<string> {
    // Re-read when the loader did not: a rotated file is picked up on the next run.
    const known = this.ctx.secrets?.get(key)?.reveal();
    if (known !== undefined) return known;
    const path = resolveConfigPath(this.ctx.configDir, rel);
    try {
      return await readFile(path, 'utf8');
    } catch (e) {
      throw new SourceError(`${key}: cannot read ${path} (${(e as { code?: string }).code ?? 'error'})`);
    }
  }
}
