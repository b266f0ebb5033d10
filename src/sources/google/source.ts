/**
 * The Google Workspace source: a token for the delegated administrator, every user
 * (users.list, paged), the selected groups and their members, flattened — a complete
 * DesiredState or an error. Nothing partial ever leaves: a page that stays throttled,
 * fails or arrives cut short fails the read before the platform is touched.
 */
import { readFile } from 'node:fs/promises';
import type { admin_directory_v1 } from '@googleapis/admin';
import type { JWT } from 'google-auth-library';
import type { Logger } from 'pino';
import { resolveConfigPath } from '../../config/paths.ts';
import type { Secret } from '../../config/secret.ts';
import { DuplicateIndex } from '../../identity/duplicates.ts';
import type { DesiredState, NormalizedUser, SourceRejection } from '../../identity/model.ts';
import { admitUser } from '../../identity/admit.ts';
import { ErrorCodes, SourceError, SyncError, isSyncError } from '../../errors.ts';
import type { RetryPolicy } from '../../platform/retry.ts';
import { logDirectoryRead } from '../source.ts';
import { emptyDelta, type ChangeMechanism, type ChangeSource, type SourceChanges } from '../changes.ts';
import { readGoogleDelta, type GoogleScope } from './changes.ts';
import { decodeReportsCursor, readAdminChanges, startCursor, type ReportsInput } from './reports.ts';
import { DELEGATION_PATH, googleError } from './classify.ts';
import { createDirectory, createJwt, createReports, parseServiceAccountKey, type ServiceAccountKey } from './client.ts';
import { readGroups } from './groups.ts';
import { USER_FIELDS, mapGoogleUser, type GoogleUser } from './map.ts';
import { callApi, listAll, type CallEnv } from './paged.ts';
import { scopesFor, type GoogleWorkspaceSourceConfig } from './schema.ts';

export interface GoogleSourceContext {
  configDir: string;
  logger?: Pick<Logger, 'info' | 'warn' | 'debug'> | undefined;
  /** File contents the config loader already read, by key (`serviceAccountKeyFile`). */
  secrets?: ReadonlyMap<string, Secret> | undefined;
}

interface Session {
  key: ServiceAccountKey;
  jwt: JWT;
  directory: admin_directory_v1.Admin;
  env: CallEnv;
}

export class GoogleWorkspaceSource implements ChangeSource {
  readonly describe: string;
  private readonly config: GoogleWorkspaceSourceConfig;
  private readonly ctx: GoogleSourceContext;
  private readonly scopes: string[];
  /** The user scope of the last complete read, for group deltas (changes.ts). */
  private scope: GoogleScope | undefined;

  constructor(config: GoogleWorkspaceSourceConfig, ctx: GoogleSourceContext) {
    this.config = config;
    this.ctx = ctx;
    this.scopes = scopesFor(config);
    this.describe = `google-workspace:${config.domain ?? config.customer ?? 'my_customer'} as ${config.subject}`;
  }

  async read(signal?: AbortSignal): Promise<DesiredState> {
    const started = performance.now();
    const s = await this.open(signal);
    const stats: Record<string, number> = { userPages: 0, usersRead: 0, usersInactive: 0, retries: 0 };
    s.env.onRetry = (what, attempt, delayMs, reason) => {
      stats['retries'] = (stats['retries'] ?? 0) + 1;
      this.ctx.logger?.warn({ source: this.describe, what, attempt, delayMs, reason }, 'Google API throttled or failing; backing off');
    };
    const rejected: SourceRejection[] = [];
    const users: NormalizedUser[] = [];
    const index = new DuplicateIndex<number>('userName', (at) => {
      const u = users[at] as NormalizedUser;
      return { ref: u.userName, name: u.userName };
    });
    const rejectedIds = new Set<string>();
    const c = this.config;
    const mask = c.users.customSchemas;
    stats['userPages'] = await listAll<GoogleUser>(
      'users.list',
      'users',
      (pageToken) =>
        s.directory.users.list(
          {
            ...this.where(),
            maxResults: 500,
            orderBy: 'email',
            projection: mask.length > 0 ? 'custom' : 'basic',
            ...(mask.length > 0 ? { customFieldMask: mask.join(',') } : {}),
            ...(c.users.query ? { query: c.users.query } : {}),
            ...(pageToken ? { pageToken } : {}),
            fields: `nextPageToken,users(${USER_FIELDS})`,
          },
          this.callOptions(signal),
        ),
      s.env,
      (page) => {
        for (const raw of page) {
          stats['usersRead'] = (stats['usersRead'] ?? 0) + 1;
          const m = mapGoogleUser(raw);
          if (m.ok && index.hasId(m.value.externalId)) continue; // a user listed twice across pages
          const admitted = m.ok ? admitUser(m.value, index, users.length) : m;
          if (!admitted.ok) {
            // With the identity still readable, so the planner protects that account (reconcile.md).
            rejected.push({
              kind: 'user',
              ref: raw.primaryEmail ?? raw.id ?? '(unknown user)',
              reason: admitted.reason,
              ...(typeof raw.id === 'string' && raw.id !== '' ? { externalId: raw.id } : {}),
              ...(typeof raw.primaryEmail === 'string' && raw.primaryEmail.trim() !== '' ? { userName: raw.primaryEmail.trim() } : {}),
            });
            if (typeof raw.id === 'string') rejectedIds.add(raw.id);
            continue;
          }
          users.push(admitted.value);
          if (!admitted.value.active) stats['usersInactive'] = (stats['usersInactive'] ?? 0) + 1;
        }
      },
    );
    if (users.length === 0 && !c.allowEmpty) {
      throw new SourceError(
        `${this.describe}: users.list${c.users.query ? ` with query ${JSON.stringify(c.users.query)}` : ''} returned no usable users (${stats['usersRead']} listed, ${rejected.length} rejected): refusing an empty directory (set allowEmpty: true if that is intended)`,
      );
    }
    this.scope = { userIds: new Set(users.map((u) => u.externalId)), rejectedUserIds: new Set(rejectedIds) };
    let groups: DesiredState['groups'] = [];
    if (c.groups !== false) {
      const g = await readGroups({
        directory: s.directory,
        env: s.env,
        spec: { ...this.where(), query: c.groups.query, emails: c.groups.emails, flattenNested: c.groups.flattenNested },
        timeoutMs: c.timeoutSeconds * 1000,
        concurrency: c.concurrency,
        userIds: new Set(users.map((u) => u.externalId)),
        rejectedUserIds: rejectedIds,
        rejected,
      });
      groups = g.groups;
      Object.assign(stats, g.stats);
      if (g.stats.membersOutsideScope > 0)
        this.ctx.logger?.info(
          { source: this.describe, count: g.stats.membersOutsideScope },
          'group members outside the user scope skipped',
        );
    }
    return logDirectoryRead(this.ctx.logger, this.describe, 'Google Workspace directory read', started, { users, groups, rejected, stats });
  }

  /** The admin audit log (Reports API) when `changes` is configured; none otherwise. */
  changeMechanism(): ChangeMechanism | undefined {
    const ch = this.config.changes;
    if (ch === false) return undefined;
    return {
      name: 'google-reports',
      pollIntervalMs: ch.pollIntervalSeconds * 1000,
      blindSpots: [
        `events Google lists later than overlapSeconds (${ch.overlapSeconds} s) after they happened`,
        'changes the admin audit log does not record (e.g. a custom schema field set through the API by another app, a user changed by directory sync)',
        'a deleted group or a change to a nested group: answered by a full read',
      ],
    };
  }

  /**
   * What changed since `cursor`, from the admin audit log: each user and group an event
   * names, read again. No cursor, an unknown one, or a change that cannot be applied alone:
   * a full read, with a cursor taken before it.
   */
  async changes(cursor: string | undefined, signal?: AbortSignal): Promise<SourceChanges> {
    const ch = this.config.changes;
    const s = await this.open(signal);
    const r: ReportsInput = {
      reports: await createReports(s.jwt, this.config.rootUrl),
      env: s.env,
      callOptions: this.callOptions(signal),
      overlapMs: (ch === false ? 0 : ch.overlapSeconds) * 1000,
    };
    const full = async (
      reason: 'no cursor' | 'cursor expired' | 'cannot apply alone' | 'mechanism unavailable',
      detail?: string,
    ): Promise<SourceChanges> => {
      const next = ch === false ? '' : await startCursor(r, Date.now());
      return { kind: 'full', reason, ...(detail ? { detail } : {}), state: await this.read(signal), cursor: next };
    };
    if (ch === false) return await full('mechanism unavailable', 'changes is not configured for this source');
    if (cursor === undefined) return await full('no cursor');
    const decoded = decodeReportsCursor(cursor);
    if (decoded === undefined) return await full('cursor expired', 'not a Reports API cursor');
    const events = await readAdminChanges(r, decoded);
    if (events.events === 0) return emptyDelta(cursor);
    const d = await readGoogleDelta(
      {
        directory: s.directory,
        env: s.env,
        config: this.config,
        where: this.where(),
        callOptions: this.callOptions(signal),
        scope: this.scope,
      },
      events,
    );
    if (d.kind === 'delta') return d.delta;
    this.ctx.logger?.info({ source: this.describe, detail: d.detail }, 'Google change cannot be applied alone: reading in full');
    return await full('cannot apply alone', d.detail);
  }

  /** A token for the delegated admin (all scopes), then one user: proves key, delegation, scopes, subject, API. */
  async check(signal?: AbortSignal): Promise<string> {
    const s = await this.open(signal);
    const data = await callApi(
      'users.list (probe)',
      () => s.directory.users.list({ ...this.where(), maxResults: 1, fields: 'users(primaryEmail)' }, this.callOptions(signal)),
      s.env,
    );
    const first = (data['users'] as Array<{ primaryEmail?: string }> | undefined)?.[0]?.primaryEmail;
    if (first === undefined && !this.config.allowEmpty)
      throw new SourceError(`${this.describe}: token obtained, but users.list returned no users: check customer/domain`);
    if (this.config.changes !== false) {
      // Change detection reads the admin audit log: prove the Reports API answers this subject.
      const reports = await createReports(s.jwt, this.config.rootUrl);
      await callApi(
        'activities.list admin (probe)',
        () => reports.activities.list({ userKey: 'all', applicationName: 'admin', maxResults: 1 }, this.callOptions(signal)),
        s.env,
      );
    }
    return `token for ${this.config.subject} via ${s.key.clientEmail} (scopes: ${this.scopes.map((x) => x.split('/').pop()).join(', ')}); users.list returned ${first ?? 'no users'}${this.config.changes !== false ? '; admin audit log readable' : ''}`;
  }

  private where(): { customer: string } | { domain: string } {
    return this.config.domain !== undefined ? { domain: this.config.domain } : { customer: this.config.customer ?? 'my_customer' };
  }

  private callOptions(signal?: AbortSignal): { retry: false; timeout: number; signal?: AbortSignal } {
    // Retries are ours (callApi): one policy that also covers 403 rate limits, which gaxios does not retry.
    return { retry: false, timeout: this.config.timeoutSeconds * 1000, ...(signal ? { signal } : {}) };
  }

  /** Key, clients and a first token; a token failure is diagnosed before any list call. */
  private async open(signal?: AbortSignal): Promise<Session> {
    const c = this.config;
    const key = await this.key();
    const classify = { clientEmail: key.clientEmail, clientId: key.clientId, subject: c.subject, scopes: this.scopes };
    const policy: RetryPolicy = {
      maxAttempts: c.retry.maxAttempts,
      baseDelayMs: c.retry.baseDelayMs,
      maxDelayMs: c.retry.maxDelayMs,
      maxRetryAfterMs: c.retry.maxDelayMs,
    };
    const opts = { key, subject: c.subject, rootUrl: c.rootUrl, tokenUrl: c.tokenUrl, timeoutMs: c.timeoutSeconds * 1000 };
    try {
      const jwt = await createJwt({ ...opts, scopes: this.scopes });
      const directory = await createDirectory(jwt, c.rootUrl);
      const env: CallEnv = { policy, signal, classify };
      await callApi('token request', async () => ({ data: await jwt.authorize() }), env).catch(async (e: unknown) => {
        throw await this.diagnoseToken(e, opts, classify);
      });
      return { key, jwt, directory, env };
    } catch (e) {
      signal?.throwIfAborted();
      if (isSyncError(e)) throw e;
      throw googleError(e, { ...classify, what: 'Google API client' });
    }
  }

  /** unauthorized_client covers "no delegation" and "a scope missing": ask for each scope alone to tell which. */
  private async diagnoseToken(
    e: unknown,
    opts: Omit<Parameters<typeof createJwt>[0], 'scopes'>,
    classify: { clientEmail: string; clientId: string; subject: string; scopes: string[] },
  ): Promise<unknown> {
    if (!(e instanceof SyncError) || e.detail !== 'unauthorized_client' || this.scopes.length < 2) return e;
    const granted: string[] = [];
    for (const scope of this.scopes) {
      try {
        await (await createJwt({ ...opts, scopes: [scope] })).authorize();
        granted.push(scope);
      } catch {
        // not granted (or unreachable: then the generic message stands)
      }
    }
    if (granted.length === 0) return e;
    const missing = this.scopes.filter((s) => !granted.includes(s));
    return new SyncError(
      ErrorCodes.AUTH_FORBIDDEN,
      'fatal',
      `Google refused a token for ${classify.subject}: domain-wide delegation for client ID ${classify.clientId} (${classify.clientEmail}) lacks scope ${missing.join(', ')}. Fix: ${DELEGATION_PATH} → client ID ${classify.clientId} → set the scopes to ${this.scopes.join(',')}`,
      { cause: e.cause, detail: 'unauthorized_client' },
    );
  }

  private async key(): Promise<ServiceAccountKey> {
    const rel = this.config.serviceAccountKeyFile;
    const path = resolveConfigPath(this.ctx.configDir, rel);
    // Re-read when the loader did not: a rotated key file is picked up on the next run.
    let text = this.ctx.secrets?.get('serviceAccountKeyFile')?.reveal();
    if (text === undefined) {
      try {
        text = await readFile(path, 'utf8');
      } catch (e) {
        throw new SourceError(`serviceAccountKeyFile: cannot read ${path} (${(e as { code?: string }).code ?? 'error'})`);
      }
    }
    return parseServiceAccountKey(text, path);
  }
}
