/**
 * The LDAP / Active Directory source: one bound connection, paged searches for users and
 * groups, membership resolution, and a complete DesiredState — or a SourceError. Nothing
 * partial ever leaves this module: any failed page, range slice or bind fails the read.
 */
import { readFile } from 'node:fs/promises';
import type { Client } from 'ldapts';
import type { Logger } from 'pino';
import { resolveConfigPath } from '../../config/paths.ts';
import type { Secret } from '../../config/secret.ts';
import { trimOneNewline } from '../../config/secrets.ts';
import { userKey, type DesiredState, type NormalizedUser, type SourceRejection } from '../../identity/model.ts';
import { SourceError, isSyncError } from '../../errors.ts';
import type { Source } from '../source.ts';
import { ldapError } from './classify.ts';
import { errorContext, openLdap, type LdapCredentials } from './connect.ts';
import { dnKey } from './dn.ts';
import { EntryView } from './entry.ts';
import { resolveMemberships } from './flatten.ts';
import { mapGroup, mapUser, readId, type RawGroup } from './map.ts';
import type { IdFormat } from './presets.ts';
import { pagedSearch, readEntry } from './paged-search.ts';
import { collectRange, findRangeSlice } from './range.ts';
import type { LdapSourceConfig } from './schema.ts';
import { resolveLdapSettings, type LdapSettings } from './settings.ts';

export type SourceLogger = Pick<Logger, 'info' | 'warn' | 'debug'>;

export interface LdapSourceContext {
  configDir: string;
  logger?: SourceLogger | undefined;
  /** File contents the config loader already read, by key (`bindPasswordFile`, `caFile`). */
  secrets?: ReadonlyMap<string, Secret> | undefined;
}

type Stats = Record<string, number>;

export class LdapSource implements Source {
  readonly describe: string;
  readonly settings: LdapSettings;
  private readonly config: LdapSourceConfig;
  private readonly ctx: LdapSourceContext;

  constructor(config: LdapSourceConfig, ctx: LdapSourceContext) {
    this.config = config;
    this.ctx = ctx;
    this.settings = resolveLdapSettings(config);
    this.describe = `ldap:${config.url} (${config.preset})`;
    if (!/^ldaps:/i.test(config.url) && !config.startTls) {
      ctx.logger?.warn({ source: this.describe }, 'LDAP without TLS: the bind password travels in clear (allowInsecure: true)');
    }
  }

  async read(signal?: AbortSignal): Promise<DesiredState> {
    const started = performance.now();
    try {
      const client = await openLdap(this.settings, await this.credentials(), signal);
      try {
        const state = await this.readAll(client, signal);
        this.ctx.logger?.info(
          {
            source: this.describe,
            users: state.users.length,
            groups: state.groups.length,
            rejected: state.rejected.length,
            stats: state.stats,
            ms: Math.round(performance.now() - started),
          },
          'LDAP directory read',
        );
        return state;
      } finally {
        await client.unbind().catch(() => undefined);
      }
    } catch (e) {
      signal?.throwIfAborted();
      if (isSyncError(e)) throw e;
      throw new SourceError(`LDAP read from ${this.config.url} failed: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
    }
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

  private async readAll(client: Client, signal: AbortSignal | undefined): Promise<DesiredState> {
    const s = this.settings;
    const stats: Stats = { ldapPages: 0, referencesIgnored: 0, usersDisabled: 0, activeUnknown: 0, rangeRequests: 0 };
    const rejected: SourceRejection[] = [];

    const userEntries = await this.searchAll(client, s.users, s.users.attributes, 'users', stats, signal, rejected);
    const disabledByFilter = await this.disabledDns(client, stats, signal);

    const users: NormalizedUser[] = [];
    const byId = new Set<string>();
    const byName = new Set<string>();
    const userByDn = new Map<string, string>();
    const userByUid = new Map<string, string>();
    const rejectedUserDns = new Set<string>();
    const seenDns = new Set<string>();
    for (const raw of userEntries) {
      const e = new EntryView(raw);
      const key = dnKey(e.dn);
      if (seenDns.has(key)) continue; // overlapping base DNs return the same entry twice
      seenDns.add(key);
      const m = mapUser(e, s, disabledByFilter.has(key));
      let reason = m.ok ? undefined : m.reason;
      if (m.ok && byId.has(m.value.user.externalId)) reason = `duplicate externalId ${m.value.user.externalId}`;
      if (m.ok && byName.has(userKey(m.value.user.userName))) reason = `duplicate userName ${m.value.user.userName}`;
      if (reason !== undefined || !m.ok) {
        rejected.push({
          kind: 'user',
          ref: e.dn,
          reason: reason ?? 'unreadable',
          ...entryIdentity(e, s.userMap.externalId, s.userMap.externalIdFormat, 'userName', s.userMap.userName),
        });
        rejectedUserDns.add(key);
        continue;
      }
      const u = m.value.user;
      users.push(u);
      byId.add(u.externalId);
      byName.add(userKey(u.userName));
      userByDn.set(key, u.externalId);
      if (s.memberAttribute === 'memberUid')
        for (const uid of e.strings(s.memberUidAttribute)) userByUid.set(uid.trim().toLowerCase(), u.externalId);
      if (!u.active) stats.usersDisabled = (stats.usersDisabled ?? 0) + 1;
      if (m.value.activeUnknown) stats.activeUnknown = (stats.activeUnknown ?? 0) + 1;
    }
    if (stats.activeUnknown) {
      this.ctx.logger?.warn(
        { source: this.describe, count: stats.activeUnknown },
        'disabled-account attribute unreadable for some users: treated as active',
      );
    }
    if (users.length === 0 && !s.allowEmpty) {
      throw new SourceError(
        `LDAP search of users under ${s.users.baseDns.join('; ')} with ${s.users.filter} returned no usable users (${userEntries.length} entries, ${rejected.length} rejected): refusing an empty directory (set allowEmpty: true if that is intended)`,
      );
    }

    const groups = s.groups ? await this.readGroups(client, rejected, stats, signal) : [];
    const membership = resolveMemberships({
      groups,
      userByDn,
      userByUid,
      rejectedUserDns,
      memberAttribute: s.memberAttribute,
      flattenNested: s.flattenNested,
    });
    Object.assign(stats, membership.stats, { usersRead: userEntries.length, groupsRead: groups.length });
    if (membership.stats.membersOutsideScope > 0) {
      this.ctx.logger?.info(
        { source: this.describe, count: membership.stats.membersOutsideScope },
        'group members outside the user scope skipped',
      );
    }
    return { users, groups: membership.groups, rejected, stats };
  }

  private async searchAll(
    client: Client,
    spec: { baseDns: string[]; filter: string; scope: 'sub' | 'one' },
    attributes: string[],
    label: string,
    stats: Stats,
    signal: AbortSignal | undefined,
    rejected?: SourceRejection[],
  ) {
    const all = [];
    for (const baseDn of spec.baseDns) {
      const r = await pagedSearch(
        client,
        this.settings,
        { baseDn, filter: spec.filter, scope: spec.scope, attributes, what: `${label} under ${baseDn}` },
        signal,
      );
      for (const e of r.entries) all.push(e);
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
    return all;
  }

  /** With a `disabled.filter`, the server tells which in-scope users are disabled. */
  private async disabledDns(client: Client, stats: Stats, signal: AbortSignal | undefined): Promise<Set<string>> {
    const s = this.settings;
    const out = new Set<string>();
    if (s.disabled.filter === undefined) return out;
    const filter = `(&${wrap(s.users.filter)}${wrap(s.disabled.filter)})`;
    const entries = await this.searchAll(client, { ...s.users, filter }, ['1.1'], 'disabled users', stats, signal);
    for (const e of entries) out.add(dnKey(e.dn));
    return out;
  }

  private async readGroups(
    client: Client,
    rejected: SourceRejection[],
    stats: Stats,
    signal: AbortSignal | undefined,
  ): Promise<RawGroup[]> {
    const s = this.settings;
    const g = s.groups as NonNullable<LdapSettings['groups']>;
    const entries = await this.searchAll(client, g, g.attributes, 'groups', stats, signal, rejected);
    const out: RawGroup[] = [];
    const ids = new Set<string>();
    const names = new Set<string>();
    const seenDns = new Set<string>();
    for (const raw of entries) {
      const e = new EntryView(raw);
      const key = dnKey(e.dn);
      if (seenDns.has(key)) continue;
      seenDns.add(key);
      let members = e.strings(s.memberAttribute);
      if (s.rangeRetrieval) {
        const slice = findRangeSlice(raw, s.memberAttribute);
        if (slice) {
          signal?.throwIfAborted();
          const r = await collectRange(e.dn, s.memberAttribute, slice, (dn, attr) => readEntry(client, s, dn, [attr], `group ${dn}`));
          members = members.concat(r.values);
          stats.rangeRequests = (stats.rangeRequests ?? 0) + r.requests;
        }
      }
      const m = mapGroup(e, s, members);
      let reason = m.ok ? undefined : m.reason;
      if (m.ok && ids.has(m.value.externalId)) reason = `duplicate externalId ${m.value.externalId}`;
      if (m.ok && names.has(m.value.displayName.toLowerCase())) reason = `duplicate displayName ${m.value.displayName}`;
      if (reason !== undefined || !m.ok) {
        rejected.push({
          kind: 'group',
          ref: e.dn,
          reason: reason ?? 'unreadable',
          ...entryIdentity(e, g.map.externalId, g.map.externalIdFormat, 'displayName', g.map.displayName),
        });
        continue;
      }
      ids.add(m.value.externalId);
      names.add(m.value.displayName.toLowerCase());
      out.push(m.value);
    }
    return out;
  }
}

/** What a rejected entry still shows (SourceRejection): its id and name when readable, and its DN. */
function entryIdentity(
  e: EntryView,
  idAttr: string,
  idFormat: IdFormat,
  nameKey: 'userName' | 'displayName',
  nameAttr: string,
): Partial<SourceRejection> {
  const id = readId(e, idAttr, idFormat);
  const name = e.first(nameAttr)?.trim();
  return { dn: e.dn, ...(id.ok ? { externalId: id.value } : {}), ...(name ? { [nameKey]: name } : {}) };
}

/**
 * Active Directory answers a search of the domain root with references to its application
 * partitions (DomainDnsZones, ForestDnsZones) and the configuration partition. They hold DNS
 * records and forest configuration, never user or group objects, so they are not reported.
 */
export function isAdApplicationPartition(uri: string): boolean {
  const dn = decodeURIComponent(uri.replace(/^ldaps?:\/\/[^/]*\/?/i, '')).toLowerCase();
  return /^(dc=domaindnszones|dc=forestdnszones|cn=configuration)\b/.test(dn);
}

function wrap(filter: string): string {
  const f = filter.trim();
  return f.startsWith('(') ? f : `(${f})`;
}

async function readFileOrFail(path: string, key: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (e) {
    throw new SourceError(`${key}: cannot read ${path} (${(e as { code?: string }).code ?? 'error'})`);
  }
}

export function createLdapSource(config: LdapSourceConfig, ctx: LdapSourceContext): Source {
  return new LdapSource(config, ctx);
}
