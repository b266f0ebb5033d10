/**
 * The LDAP / Active Directory source: one bound connection, paged searches for users and
 * groups, membership resolution, and a complete DesiredState — or a SourceError. Nothing
 * partial ever leaves this module: any failed page, range slice or bind fails the read.
 */
import { readFile } from 'node:fs/promises';
import type { Client, Entry } from 'ldapts';
import type { Logger } from 'pino';
import { resolveConfigPath } from '../../config/paths.ts';
import type { Secret } from '../../config/secret.ts';
import { trimOneNewline } from '../../config/secrets.ts';
import type { DesiredState, SourceRejection } from '../../identity/model.ts';
import { SourceError, isSyncError } from '../../errors.ts';
import { logDirectoryRead } from '../source.ts';
import type { ChangeMechanism, ChangeSource, SourceChanges } from '../changes.ts';
import { changeMechanismOf, LdapChangeReader } from './changes.ts';
import { ldapError } from './classify.ts';
import { errorContext, openLdap, type LdapCredentials } from './connect.ts';
import { dnKey } from './dn.ts';
import { EntryView } from './entry.ts';
import { MembershipResolver } from './flatten.ts';
import { admitGroupEntry, groupIndex } from './admit-group.ts';
import { wrap } from './filter.ts';
import { UserCollector } from './collect-users.ts';
import { pagedSearch, readEntry } from './paged-search.ts';
import { collectRange, findRangeSlice, type RangeSlice } from './range.ts';
import type { LdapSourceConfig } from './schema.ts';
import { resolveLdapSettings, type LdapSettings } from './settings.ts';

/** `isLevelEnabled` (pino's) lets per-page debug lines skip their memory readings when debug is off. */
export type SourceLogger = Pick<Logger, 'info' | 'warn' | 'debug'> & Partial<Pick<Logger, 'isLevelEnabled'>>;

export interface LdapSourceContext {
  configDir: string;
  logger?: SourceLogger | undefined;
  /** File contents the config loader already read, by key (`bindPasswordFile`, `caFile`). */
  secrets?: ReadonlyMap<string, Secret> | undefined;
}

type Stats = Record<string, number>;

export interface DirectoryRead {
  state: DesiredState;
  /** Group externalId → the groups nested directly in it (MembershipResult.nested). */
  nested: ReadonlyMap<string, readonly string[]>;
  /** What was admitted or rejected, by user DN (the change reader's UserDnIndex). */
  admissions: Pick<UserCollector, 'userByDn' | 'rejectedUserDns'>;
}

/** Sources already warned about for a bind without TLS: once per process, not per construction (validate, plan and each daemon run build one). */
const warnedInsecure = new Set<string>();

/** A polling connection is replaced after this long, so a rotated bind password or a moved server is picked up. */
const POLL_CONNECTION_MAX_MS = 10 * 60_000;

export class LdapSource implements ChangeSource {
  readonly describe: string;
  readonly settings: LdapSettings;
  private readonly config: LdapSourceConfig;
  private readonly ctx: LdapSourceContext;
  private readonly changeReader: LdapChangeReader;
  /** The connection change polls share (withPollingClient). */
  private polling: { client: Client; openedAt: number } | undefined;

  constructor(config: LdapSourceConfig, ctx: LdapSourceContext) {
    this.config = config;
    this.ctx = ctx;
    this.settings = resolveLdapSettings(config);
    this.describe = `ldap:${config.url} (${config.preset})`;
    this.changeReader = new LdapChangeReader(this, ctx.logger);
    if (!/^ldaps:/i.test(config.url) && !config.startTls && !warnedInsecure.has(this.describe)) {
      warnedInsecure.add(this.describe);
      ctx.logger?.warn({ source: this.describe }, 'LDAP without TLS: the bind password travels in clear (allowInsecure: true)');
    }
  }

  async read(signal?: AbortSignal): Promise<DesiredState> {
    const started = performance.now();
    return this.withClient('read', signal, async (client) => {
      const { state } = await this.readDirectory(client, signal);
      return logDirectoryRead(this.ctx.logger, this.describe, 'LDAP directory read', started, state);
    });
  }

  changeMechanism(): ChangeMechanism | undefined {
    return changeMechanismOf(this.settings, this.changeReader.deletesVisible);
  }

  /**
   * What changed since `cursor` (changes.ts); a full read when the cursor cannot be used. Polls
   * share one bound connection (a bind every poll would be a logon event every few seconds on
   * the server, and a TLS handshake each time).
   */
  async changes(cursor: string | undefined, signal?: AbortSignal): Promise<SourceChanges> {
    return this.withPollingClient(signal, (client) => this.changeReader.changes(client, cursor, signal));
  }

  /** Unbinds the polling connection. */
  async close(): Promise<void> {
    const kept = this.polling;
    this.polling = undefined;
    await kept?.client.unbind().catch(() => undefined);
  }

  /** One bound connection for `fn`, unbound afterwards; every failure leaves as a classified SourceError. */
  private async withClient<T>(what: string, signal: AbortSignal | undefined, fn: (client: Client) => Promise<T>): Promise<T> {
    try {
      const client = await openLdap(this.settings, await this.credentials(), signal);
      try {
        return await fn(client);
      } finally {
        await client.unbind().catch(() => undefined);
      }
    } catch (e) {
      throw this.classified(what, e, signal);
    }
  }

  /**
   * `fn` on the kept polling connection, opened and bound when there is none, it lost its bind,
   * or it is older than POLL_CONNECTION_MAX_MS (a rotated password or a moved server is picked
   * up). A kept connection that fails is dropped and the poll tried once more on a new one (the
   * server may have closed it while idle). ldapts reconnects a dropped socket by itself, without
   * a bind: an answer given on a connection that is no longer bound is refused, never used (an
   * anonymous search sees less, and a poll that sees less would move the cursor past changes).
   */
  private async withPollingClient<T>(signal: AbortSignal | undefined, fn: (client: Client) => Promise<T>): Promise<T> {
    const kept = this.polling;
    if (kept && (!kept.client.isBound || performance.now() - kept.openedAt > POLL_CONNECTION_MAX_MS)) await this.close();
    const reused = this.polling !== undefined;
    try {
      this.polling ??= { client: await openLdap(this.settings, await this.credentials(), signal), openedAt: performance.now() };
      const { client } = this.polling;
      const out = await fn(client);
      if (!client.isBound) throw new Error('the connection was re-established without a bind during the poll; its answers are not used');
      return out;
    } catch (e) {
      await this.close();
      if (reused && !signal?.aborted && !isSyncError(e)) return this.withPollingClient(signal, fn);
      throw this.classified('change read', e, signal);
    }
  }

  private classified(what: string, e: unknown, signal: AbortSignal | undefined): unknown {
    signal?.throwIfAborted();
    if (isSyncError(e)) return e;
    return new SourceError(`LDAP ${what} from ${this.config.url} failed: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
  }

  /** Bind, then a one-entry search of the first user base: proves URL, TLS, credentials and base DN. */
  async check(signal?: AbortSignal): Promise<string> {
    const s = this.settings;
    const client = await openLdap(s, await this.credentials(), signal);
    try {
      const base = s.users.baseDns[0] as string;
      const what = `users under ${base}`;
      let found: number;
      try {
        const res = await client.search(base, {
          scope: s.users.scope,
          filter: s.users.filter,
          sizeLimit: 1,
          attributes: ['1.1'],
          timeLimit: Math.ceil(s.timeoutSeconds),
        });
        found = res.searchEntries.length;
      } catch (e) {
        throw ldapError(e, 'search', errorContext(s, what));
      }
      if (found === 0)
        throw new SourceError(`LDAP search of ${what} with ${s.users.filter} found no entries: check users.baseDn and users.filter`);
      return `bound to ${this.config.url} as ${s.bindDn}; search of ${what} returned an entry`;
    } finally {
      await client.unbind().catch(() => undefined);
    }
  }

  private async credentials(): Promise<LdapCredentials> {
    const c = this.config;
    // Re-read when the loader did not: a rotated secret file is picked up on the next run.
    let password = c.bindPassword ?? this.ctx.secrets?.get('bindPasswordFile')?.reveal();
    if (password === undefined) {
      const path = resolveConfigPath(this.ctx.configDir, c.bindPasswordFile as string);
      password = trimOneNewline(await readFileOrFail(path, 'bindPasswordFile'));
      if (password === '') throw new SourceError(`bindPasswordFile ${path} is empty`);
    }
    const ca =
      c.caFile === undefined
        ? undefined
        : (this.ctx.secrets?.get('caFile')?.reveal() ?? (await readFileOrFail(resolveConfigPath(this.ctx.configDir, c.caFile), 'caFile')));
    return { password, ca };
  }

  /** The complete desired state, and which groups are nested in which (for the change reader's ancestors). */
  async readDirectory(client: Client, signal: AbortSignal | undefined): Promise<DirectoryRead> {
    const s = this.settings;
    const stats: Stats = { ldapPages: 0, referencesIgnored: 0, usersDisabled: 0, activeUnknown: 0, rangeRequests: 0 };
    const rejected: SourceRejection[] = [];

    const disabledByFilter = await this.disabledDns(client, stats, signal);

    // Users are mapped page by page: only the normalized users and their indexes accumulate.
    const collector = new UserCollector(s, disabledByFilter, rejected);
    const users = collector.users;
    const addUser = (raw: Entry): void => collector.add(raw);
    const usersRead = await this.searchAll(client, s.users, s.users.attributes, 'users', stats, signal, addUser, rejected);
    stats.usersDisabled = collector.usersDisabled;
    stats.activeUnknown = collector.activeUnknown;
    if (stats.activeUnknown) {
      this.ctx.logger?.warn(
        { source: this.describe, count: stats.activeUnknown },
        'disabled-account attribute unreadable for some users: treated as active',
      );
    }
    if (users.length === 0 && !s.allowEmpty) {
      throw new SourceError(
        `LDAP search of users under ${s.users.baseDns.join('; ')} with ${s.users.filter} returned no usable users (${usersRead} entries, ${rejected.length} rejected): refusing an empty directory (set allowEmpty: true if that is intended)`,
      );
    }

    const resolver = new MembershipResolver({
      userByDn: collector.userByDn,
      userByUid: collector.userByUid,
      rejectedUserDns: collector.rejectedUserDns,
      memberAttribute: s.memberAttribute,
      flattenNested: s.flattenNested,
    });
    const groupsRead = s.groups ? await this.readGroups(client, resolver, rejected, stats, signal) : 0;
    const membership = resolver.finish();
    if (this.ctx.logger?.isLevelEnabled?.('debug')) {
      const m = process.memoryUsage();
      this.ctx.logger.debug({ source: this.describe, heapUsedMb: mb(m.heapUsed), rssMb: mb(m.rss) }, 'LDAP memberships resolved');
    }
    Object.assign(stats, membership.stats, { usersRead, groupsRead });
    if (membership.stats.membersOutsideScope > 0) {
      this.ctx.logger?.info(
        { source: this.describe, count: membership.stats.membersOutsideScope },
        'group members outside the user scope skipped',
      );
    }
    return { state: { users, groups: membership.groups, rejected, stats }, nested: membership.nested, admissions: collector };
  }

  /** Every entry of the search under each base DN, handed to `onEntry` page by page; returns how many. */
  async searchAll(
    client: Client,
    spec: { baseDns: string[]; filter: string; scope: 'sub' | 'one' },
    attributes: string[],
    label: string,
    stats: Stats,
    signal: AbortSignal | undefined,
    onEntry: (e: Entry) => void,
    rejected?: SourceRejection[],
  ): Promise<number> {
    const logger = this.ctx.logger;
    const debug = logger?.isLevelEnabled?.('debug') === true;
    let count = 0;
    for (const baseDn of spec.baseDns) {
      const what = `${label} under ${baseDn}`;
      const onPage = (entries: Entry[], page: number): void => {
        for (const e of entries) onEntry(e);
        if (debug) {
          // Heap after each page: what accumulates is the mapped result, not the raw pages.
          const m = process.memoryUsage();
          logger?.debug(
            { source: this.describe, search: what, page, entries: entries.length, heapUsedMb: mb(m.heapUsed), rssMb: mb(m.rss) },
            'LDAP page read',
          );
        }
      };
      const r = await pagedSearch(
        client,
        this.settings,
        { baseDn, filter: spec.filter, scope: spec.scope, attributes, what },
        onPage,
        signal,
      );
      count += r.entries;
      // Present but unread: whatever lies under a referral we did not follow may include
      // people we manage. Reported without an identity, so the planner holds deprovisioning.
      const kind = label === 'groups' ? 'group' : 'user';
      for (const uri of r.referenceUris.filter((u) => !isAdApplicationPartition(u))) {
        rejected?.push({
          kind,
          ref: uri,
          reason: `search reference (referral) returned by the search of ${label} under ${baseDn} was not followed: the ${label} under it were not read`,
        });
      }
      stats.ldapPages = (stats.ldapPages ?? 0) + r.pages;
      stats.referencesIgnored = (stats.referencesIgnored ?? 0) + r.references;
    }
    return count;
  }

  /** With a `disabled.filter`, the server tells which in-scope users are disabled. */
  async disabledDns(client: Client, stats: Stats, signal: AbortSignal | undefined): Promise<Set<string>> {
    const s = this.settings;
    const out = new Set<string>();
    if (s.disabled.filter === undefined) return out;
    const filter = `(&${wrap(s.users.filter)}${wrap(s.disabled.filter)})`;
    await this.searchAll(client, { ...s.users, filter }, ['1.1'], 'disabled users', stats, signal, (e) => out.add(dnKey(e.dn)));
    return out;
  }

  /** Groups page by page into the resolver; AD range retrieval of large groups after the search. Returns entries read. */
  private async readGroups(
    client: Client,
    resolver: MembershipResolver,
    rejected: SourceRejection[],
    stats: Stats,
    signal: AbortSignal | undefined,
  ): Promise<number> {
    const s = this.settings;
    const g = s.groups as NonNullable<LdapSettings['groups']>;
    const index = groupIndex();
    const seenDns = new Set<string>();
    const ranged: { slot: number; dn: string; slice: RangeSlice }[] = [];
    const addGroup = (raw: Entry): void => {
      const e = new EntryView(raw);
      const key = dnKey(e.dn);
      if (seenDns.has(key)) return;
      seenDns.add(key);
      const slice = s.rangeRetrieval ? findRangeSlice(raw, s.memberAttribute) : undefined;
      const admitted = admitGroupEntry(e, s, index);
      if (!admitted.ok) {
        rejected.push(admitted.rejection);
        return;
      }
      const slot = resolver.add(admitted.value);
      if (slice) ranged.push({ slot, dn: e.dn, slice });
    };
    const read = await this.searchAll(client, g, g.attributes, 'groups', stats, signal, addGroup, rejected);
    // The rest of each ranged member list, read once the paged search is over.
    for (const { slot, dn, slice } of ranged) {
      signal?.throwIfAborted();
      const r = await collectRange(dn, s.memberAttribute, slice, (d, attr) => readEntry(client, s, d, [attr], `group ${d}`));
      resolver.addMembers(slot, r.values);
      stats.rangeRequests = (stats.rangeRequests ?? 0) + r.requests;
    }
    return read;
  }
}

const mb = (bytes: number): number => Math.round(bytes / 1024 / 102.4) / 10;

/**
 * Active Directory answers a search of the domain root with references to its application
 * partitions (DomainDnsZones, ForestDnsZones) and the configuration partition. They hold DNS
 * records and forest configuration, never user or group objects, so they are not reported.
 */
export function isAdApplicationPartition(uri: string): boolean {
  const dn = decodeURIComponent(uri.replace(/^ldaps?:\/\/[^/]*\/?/i, '')).toLowerCase();
  return /^(dc=domaindnszones|dc=forestdnszones|cn=configuration)\b/.test(dn);
}

async function readFileOrFail(path: string, key: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (e) {
    throw new SourceError(`${key}: cannot read ${path} (${(e as { code?: string }).code ?? 'error'})`);
  }
}

export function createLdapSource(config: LdapSourceConfig, ctx: LdapSourceContext): ChangeSource {
  return new LdapSource(config, ctx);
}
