/**
 * The SCIM source: lists users and groups of another SCIM 2.0 server with the same client the
 * platform side uses (its paging never returns a silently short list), maps them, and fails
 * the read as a SourceError on any listing failure.
 */
import { pagingLimitsFrom } from '../../platform/scim/listing-limits.ts';
import { readFile } from 'node:fs/promises';
import type { Secret } from '../../config/secret.ts';
import { trimOneNewline } from '../../config/secrets.ts';
import { resolveConfigPath } from '../../config/paths.ts';
import { nfc } from '../../identity/canonical-name.ts';
import { DuplicateIndex, type KeptEntry } from '../../identity/duplicates.ts';
import type { DesiredState, NormalizedUser, SourceRejection } from '../../identity/model.ts';
import { admitGroup, admitUser } from '../../identity/admit.ts';
import { SourceError, isSyncError } from '../../errors.ts';
import { PlatformClient } from '../../platform/http-client.ts';
import { ScimClient } from '../../platform/scim/client.ts';
import type { Source } from '../source.ts';
import type { ChangeMechanism, ChangeSource, SourceChanges } from '../changes.ts';
import {
  FIRST_CURSOR_SKEW_MS,
  SCIM_CHANGE_MECHANISM,
  decodeScimCursor,
  discoverLastModifiedFilter,
  encodeScimCursor,
  knownFrom,
  readScimDelta,
  type ScimKnown,
} from './changes.ts';
import { mapScimGroups, mapScimUser } from './map.ts';
import type { ScimSourceConfig } from './schema.ts';

export interface ScimSourceContext {
  configDir: string;
  /** File contents the config loader already read, by key (`tokenFile`, `caFile`). */
  secrets?: ReadonlyMap<string, Secret> | undefined;
}

export class ScimSource implements ChangeSource {
  readonly describe: string;
  private readonly config: ScimSourceConfig;
  private readonly ctx: ScimSourceContext;
  /** Whether the server filters on meta.lastModified: unknown until discovered (changes(), check()). */
  private lastModifiedFilter: boolean | undefined;
  /** Member ids and nesting of the last complete read, for group deltas. */
  private known: ScimKnown | undefined;

  constructor(config: ScimSourceConfig, ctx: ScimSourceContext) {
    this.config = config;
    this.ctx = ctx;
    this.describe = `scim:${config.baseUrl.replace(/\/+$/, '')}${config.scimPath}`;
  }

  async read(signal?: AbortSignal): Promise<DesiredState> {
    return this.withClient(async (scim) => {
      const rejected: SourceRejection[] = [];
      const users: NormalizedUser[] = [];
      const ids = new Map<string, string>();
      const index = new DuplicateIndex<number>('userName', (at) => {
        const u = users[at] as NormalizedUser;
        return { ref: `Users/${String(u.attributes['scimId'])}`, name: u.userName };
      });
      const raw = await scim.listUsers(signal);
      for (const u of raw) {
        const m = mapScimUser(u);
        const admitted = m.ok ? admitUser(m.user, index, users.length) : m;
        if (!admitted.ok) {
          const externalId = typeof u.externalId === 'string' && u.externalId !== '' ? u.externalId : u.id;
          const userName = typeof u.userName === 'string' && u.userName.trim() !== '' ? { userName: u.userName.trim() } : {};
          rejected.push({ kind: 'user', ref: `Users/${u.id}`, reason: admitted.reason, externalId, ...userName });
          continue;
        }
        users.push(admitted.value);
        ids.set(u.id, admitted.value.externalId);
      }
      if (users.length === 0 && !this.config.allowEmpty) {
        throw new SourceError(
          `${this.describe}: the source lists no usable users (${raw.length} listed, ${rejected.length} rejected): refusing an empty directory (set allowEmpty: true if that is intended)`,
        );
      }
      const stats: Record<string, number> = { usersListed: raw.length, groupsListed: 0, membersOutsideScope: 0, groupsInCycles: 0 };
      if (!this.config.groups) {
        this.known = knownFrom(ids, []);
        return { users, groups: [], rejected, stats };
      }
      const rawGroups = await scim.listGroups(signal);
      const groupIndex = new DuplicateIndex<KeptEntry>('displayName', (kept) => kept);
      const valid = rawGroups.flatMap((g) => {
        const ref = `Groups/${g.id}`;
        const externalId = typeof g.externalId === 'string' && g.externalId !== '' ? g.externalId : g.id;
        const name = typeof g.displayName === 'string' ? g.displayName.trim() : '';
        const admitted =
          name === ''
            ? { ok: false as const, reason: 'missing displayName' }
            : admitGroup({ externalId, displayName: name }, groupIndex, { ref, name: nfc(name) });
        if (admitted.ok) return [{ ...g, displayName: admitted.value.displayName }];
        rejected.push({ kind: 'group', ref, reason: admitted.reason, externalId, ...(name !== '' ? { displayName: name } : {}) });
        return [];
      });
      const mapped = mapScimGroups(valid, ids);
      this.known = knownFrom(ids, rawGroups);
      Object.assign(stats, {
        groupsListed: rawGroups.length,
        membersOutsideScope: mapped.membersOutsideScope,
        groupsInCycles: mapped.groupsInCycles,
      });
      return { users, groups: mapped.groups, rejected, stats };
    }, signal);
  }

  /**
   * `meta.lastModified gt` where the server filters on it. Assumed until discovery (the first
   * changes() or check()) says otherwise; undefined from then on for a server that cannot.
   */
  changeMechanism(): ChangeMechanism | undefined {
    return this.lastModifiedFilter === false ? undefined : SCIM_CHANGE_MECHANISM;
  }

  /** Users and groups modified since `cursor`; no cursor, an unknown one or no filter support: a full read. */
  async changes(cursor: string | undefined, signal?: AbortSignal): Promise<SourceChanges> {
    const supported = await this.withClient((scim, http) => this.discover(scim, http, signal), signal);
    const started = encodeScimCursor({ since: new Date(Date.now() - FIRST_CURSOR_SKEW_MS).toISOString(), seen: [] });
    if (!supported)
      return {
        kind: 'full',
        reason: 'mechanism unavailable',
        detail: 'the server does not filter on meta.lastModified',
        state: await this.read(signal),
        cursor: started,
      };
    const decoded = cursor === undefined ? undefined : decodeScimCursor(cursor);
    if (decoded !== undefined) {
      const known = this.known;
      const r = await this.withClient((scim) => readScimDelta(scim, decoded, known, this.config.groups, signal), signal);
      if (r.kind === 'delta') return r.delta;
      return { kind: 'full', reason: 'cannot apply alone', detail: r.detail, state: await this.read(signal), cursor: started };
    }
    const reason = cursor === undefined ? 'no cursor' : 'cursor expired';
    return { kind: 'full', reason, state: await this.read(signal), cursor: started };
  }

  private async discover(scim: ScimClient, http: PlatformClient, signal?: AbortSignal): Promise<boolean> {
    this.lastModifiedFilter ??= await discoverLastModifiedFilter(scim, http, `${this.config.scimPath.replace(/\/+$/, '')}/Users`, signal);
    return this.lastModifiedFilter;
  }

  async check(signal?: AbortSignal): Promise<string> {
    return this.withClient(async (scim, http) => {
      await this.discover(scim, http, signal);
      // One small read proves URL, TLS, token and path without listing everything.
      const path = `${this.config.scimPath.replace(/\/+$/, '')}/Users`;
      const res = await http.requestJson<{ totalResults?: unknown }>('GET', path, {
        route: 'scim_users',
        query: { count: 1, startIndex: 1 },
        what: 'probe source users',
        ...(signal ? { signal } : {}),
      });
      const total = typeof res.body?.totalResults === 'number' ? res.body.totalResults : undefined;
      const changes = this.lastModifiedFilter ? 'changes by meta.lastModified' : 'no change filter (full reads only)';
      return `${this.describe}: readable${total === undefined ? '' : `, ${total} users`}; ${changes}`;
    }, signal);
  }

  private async withClient<T>(fn: (scim: ScimClient, http: PlatformClient) => Promise<T>, signal?: AbortSignal): Promise<T> {
    let http: PlatformClient | undefined;
    try {
      const c = this.config;
      const ms = c.timeoutSeconds * 1000;
      http = new PlatformClient({
        baseUrl: c.baseUrl,
        token: await this.secret('tokenFile', c.token),
        authScheme: c.authScheme,
        allowInsecureHttp: c.allowInsecureHttp,
        maxConnections: 4,
        connectTimeoutMs: Math.min(ms, 10_000),
        headersTimeoutMs: ms,
        bodyTimeoutMs: ms,
        ...(c.caFile !== undefined ? { ca: await this.secret('caFile') } : {}),
      });
      // Only listing is used: the write-side options are irrelevant here.
      const scim = new ScimClient(http, {
        scimPath: c.scimPath,
        pageSize: c.pageSize,
        maxMembersPerPatch: 100,
        memberRemoveDialect: 'filter',
        updateMethod: 'auto',
        discover: true,
        paging: pagingLimitsFrom(c.listing),
      });
      return await fn(scim, http);
    } catch (e) {
      signal?.throwIfAborted();
      if (e instanceof SourceError) throw e;
      const msg = e instanceof Error ? e.message : String(e);
      throw new SourceError(`${this.describe}: ${msg}`, {
        cause: e,
        ...(isSyncError(e) && e.status !== undefined ? { status: e.status } : {}),
      });
    } finally {
      await http?.close();
    }
  }

  /** `key` is the file key; `inline` the direct value when the config gave one. */
  private async secret(key: 'tokenFile' | 'caFile', inline?: string): Promise<string> {
    if (inline !== undefined) return inline;
    const loaded = this.ctx.secrets?.get(key);
    if (loaded) return loaded.reveal();
    const rel = this.config[key] as string;
    const path = resolveConfigPath(this.ctx.configDir, rel);
    try {
      const text = await readFile(path, 'utf8');
      return key === 'tokenFile' ? trimOneNewline(text) : text;
    } catch (e) {
      throw new SourceError(`${key}: cannot read ${path} (${(e as { code?: string }).code ?? 'error'})`);
    }
  }
}

export function createScimSource(config: ScimSourceConfig, ctx: ScimSourceContext): Source {
  return new ScimSource(config, ctx);
}
