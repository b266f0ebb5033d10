/**
 * The LDAP change reader (ChangeSource.changes): which entries changed since the cursor, as
 * complete current records.
 *
 * - `modify-timestamp` (any server): `(|(modifyTimestamp>=T)(createTimestamp>=T))` with T the
 *   least the server's clock read when the previous poll's search began (ServerClock: moved on
 *   by elapsed time while the directory is quiet) minus an overlap (generalized time has 1 s
 *   resolution, and an operation under way is stamped when it began). Entries already
 *   delivered within the overlap are skipped by their entryCSN (OpenLDAP); servers without one
 *   get them again, which is harmless (complete records).
 * - `usn` (Active Directory, as Microsoft documents polling): `(uSNChanged>=N+1)` with N the
 *   DC's highestCommittedUSN when the previous poll began; deleted objects through the Show
 *   Deleted control. A USN belongs to one DC (its invocationId): another DC → a full read.
 *
 * Changed entries are looked for in the whole naming context (so a move out of scope is seen),
 * then classified by the server: in the user scope and filter → upserted (mapped and admitted
 * exactly as read() does), in the group scope and filter → upserted with the complete flattened
 * member list and, with nesting, every group it is nested in; anything else → removed.
 */
import type { Client, Control, Entry } from 'ldapts';
import { SourceError } from '../../errors.ts';
import type { NormalizedGroup, SourceRejection } from '../../identity/model.ts';
import { emptyDelta, type ChangeMechanism, type SourceChanges, type SourceDelta } from '../changes.ts';
import {
  cursorScope,
  decodeCursor,
  encodeCursor,
  formatGeneralizedTime,
  parseGeneralizedTime,
  type LdapCursor,
  type TimestampCursor,
  type UsnCursor,
} from './change-cursor.ts';
import { UserCollector } from './collect-users.ts';
import { dnKey, inSearchScope } from './dn.ts';
import { EntryView } from './entry.ts';
import { ancestorGroups } from './flatten.ts';
import { resolveChangedGroups } from './changed-groups.ts';
import { ServerClock } from './server-clock.ts';
import { decodeObjectGuid } from './guid.ts';
import { readId } from './map.ts';
import { pagedSearch, readEntry, readEntryMatching } from './paged-search.ts';
import type { LdapSettings } from './settings.ts';
import { wrap } from './filter.ts';
import type { DirectoryRead, LdapSource, SourceLogger } from './source.ts';
import { UserDnIndex } from './user-dn-index.ts';

/** Active Directory LDAP_SERVER_SHOW_DELETED_OID: tombstones are returned by searches. */
export const SHOW_DELETED_OID = '1.2.840.113556.1.4.417';

/** Result codes with which a server refuses the Show Deleted control (unknown critical extension, no right, unwilling). */
const CONTROL_REFUSED = new Set([12, 50, 53]);

type Stats = Record<string, number>;

/** What the change reader needs of the source: the same searches and full read as read(). */
export type ChangeReaderHost = Pick<LdapSource, 'settings' | 'describe' | 'searchAll' | 'readDirectory'>;

interface RootDse {
  namingContexts: string[];
  /** AD and some others publish the server's clock. */
  currentTime: number | undefined;
  highestCommittedUsn: number | undefined;
  dsServiceName: string | undefined;
}

/** One changed entry as the change search saw it. */
interface Changed {
  dn: string;
  userId: string | undefined;
  groupId: string | undefined;
  /** When the directory says it changed (epoch ms). */
  at: number | undefined;
  /** Latest of modifyTimestamp / createTimestamp (modify-timestamp mechanism). */
  stampTime: number | undefined;
  /** entryCSN: a change stamp finer than a second, when the server has one. */
  csn: string | undefined;
}

const TIMESTAMP_ATTRS = ['modifyTimestamp', 'createTimestamp', 'entryCSN'];
const USN_ATTRS = ['whenChanged', 'uSNChanged'];

/** Up to this many changed entries are read by DN in a poll; more are found by a search of each scope. */
const READ_BY_DN_MAX = 50;

/** The first cursor's scan keeps the entries near the latest timestamp; it compacts them past this size. */
const RECENT_COMPACT_MIN = 10_000;

export function changeMechanismOf(s: LdapSettings, deletesVisible: boolean): ChangeMechanism | undefined {
  const c = s.changes;
  if (c.mechanism === undefined) return undefined;
  const common = [
    'membership kept only on the user (memberOf without member on the group): a user whose groups change is not a group change',
    'a user leaving the scope is removed, but the groups listing it are re-read only when they change themselves',
  ];
  if (c.mechanism === 'usn') {
    return {
      name: 'ad-usn-changed',
      pollIntervalMs: c.pollMs,
      blindSpots: [
        ...(c.deletedObjects && deletesVisible
          ? []
          : [
              'deleted users and groups (the Show Deleted control is off or not allowed for the bind account): the periodic full reconcile removes them',
            ]),
        'changes made on another domain controller until they replicate to the one polled',
        'membership through primaryGroupID (as in read())',
        ...common,
      ],
    };
  }
  return {
    name: 'ldap-modify-timestamp',
    pollIntervalMs: c.pollMs,
    blindSpots: [
      'deleted entries (LDAP servers keep no tombstones; OpenLDAP would need accesslog/syncrepl): the periodic full reconcile removes them',
      'a change replicated to the polled server more than overlapSeconds after it was made elsewhere (multi-provider replication lag), or stamped by a provider whose clock is that far behind',
      "changes made just after the server's clock is set back by more than overlapSeconds",
      'a group nested in a deleted group keeps reaching the parent until the full reconcile',
      ...common,
    ],
  };
}

export class LdapChangeReader {
  private readonly host: ChangeReaderHost;
  private readonly logger: SourceLogger | undefined;
  /** False once the server refused Show Deleted (reported as a blind spot). */
  deletesVisible = true;
  /** When the current poll began (performance.now), for its log line. */
  private pollBegan = 0;
  /** Admissions by user DN since this reader's last full read (undefined before one). */
  private userIndex: UserDnIndex | undefined;
  /** What this process has seen of the server's clock (modify-timestamp). */
  private readonly clock: ServerClock;

  constructor(host: ChangeReaderHost, logger: SourceLogger | undefined, clock: ServerClock = new ServerClock()) {
    this.host = host;
    this.logger = logger;
    this.clock = clock;
  }

  async changes(client: Client, cursorText: string | undefined, signal: AbortSignal | undefined): Promise<SourceChanges> {
    const s = this.host.settings;
    const mechanism = s.changes.mechanism;
    this.pollBegan = performance.now();
    if (mechanism === undefined)
      throw new SourceError(`${this.host.describe}: change detection is off (provisioning.source.changes.mechanism)`);
    const root = await this.rootDse(client);
    const roots = changeRoots(s, root);
    const scope = cursorScope(s);

    if (mechanism === 'usn') {
      if (root.highestCommittedUsn === undefined) {
        const { state } = await this.readAll(client, signal);
        return {
          kind: 'full',
          reason: 'mechanism unavailable',
          detail:
            'the server publishes no highestCommittedUSN in its root DSE (not Active Directory): use changes.mechanism: modify-timestamp',
          state,
          cursor: 'unavailable',
        };
      }
      const dc = await this.dcIdentity(client, root);
      const mark: UsnCursor = { v: 1, mechanism: 'usn', scope, usn: root.highestCommittedUsn, dc };
      const prior = this.usable(cursorText, scope, mechanism);
      if (!prior.ok) return this.full(client, prior.reason, prior.why, mark, signal);
      const cur = prior.cursor as UsnCursor;
      if (cur.dc !== dc)
        return this.full(
          client,
          'cursor expired',
          `the cursor was taken on another domain controller (invocationId ${cur.dc}, now ${dc})`,
          mark,
          signal,
        );
      if (mark.usn <= cur.usn) return emptyDelta(cursorText as string);
      const filter = `(uSNChanged>=${cur.usn + 1})`;
      const changed = await this.scan(client, roots, filter, USN_ATTRS, signal);
      const deleted = s.changes.deletedObjects ? await this.deletedSince(client, roots, cur.usn + 1, signal) : new Map<string, Changed>();
      if (changed.size === 0 && deleted.size === 0) return emptyDelta(cursorText as string);
      return this.classify(client, filter, changed, deleted, encodeCursor(mark), signal);
    }

    if (root.currentTime !== undefined) this.clock.observe(root.currentTime);
    const prior = this.usable(cursorText, scope, mechanism);
    if (!prior.ok) return this.full(client, prior.reason, prior.why, await this.timestampMark(client, root, roots, scope, signal), signal);
    const cur = prior.cursor as TimestampCursor;
    const overlapMs = s.changes.overlapSeconds * 1000;
    const priorT = parseGeneralizedTime(cur.t) as number;
    const since = formatGeneralizedTime(priorT - overlapMs);
    const filter = `(|(modifyTimestamp>=${since})(createTimestamp>=${since}))`;
    const started = this.clock.now();
    const changed = await this.scan(client, roots, filter, TIMESTAMP_ATTRS, signal);
    const ended = this.clock.now();
    // A quiet directory: nothing in the window, the cursor stays as it is (no state write).
    if (changed.size === 0) return emptyDelta(cursorText as string);
    // The next window starts `overlapSeconds` before the least the server's clock read when this
    // search began: a change not yet visible to it was stamped no earlier (its operation was
    // under way at most `overlapSeconds` before). A stamp in the results was read by the
    // server's clock before the search ended, which bounds the clock at its start too.
    const before = this.clock.lowerBound(started);
    const latest = latestStamp(changed, -Infinity);
    if (latest > -Infinity) this.clock.observe(latest, ended);
    const startBound = Math.max(priorT, before ?? -Infinity, this.clock.lowerBound(started) ?? -Infinity);
    const nextT = formatGeneralizedTime(startBound);
    const next: TimestampCursor = {
      v: 1,
      mechanism: 'modify-timestamp',
      scope,
      t: nextT,
      seen: seenWithin(changed, (parseGeneralizedTime(nextT) as number) - overlapMs),
    };
    const fresh = new Map([...changed].filter(([key, c]) => c.csn === undefined || cur.seen[key] !== c.csn));
    if (fresh.size === 0) return emptyDelta(nextT === cur.t && sameSeen(next.seen, cur.seen) ? (cursorText as string) : encodeCursor(next));
    return this.classify(client, filter, fresh, new Map(), encodeCursor(next), signal);
  }

  /** A full read, whose admissions become the index large groups' members are resolved from. */
  private async readAll(client: Client, signal: AbortSignal | undefined): Promise<DirectoryRead> {
    const dir = await this.host.readDirectory(client, signal);
    this.userIndex = new UserDnIndex();
    this.userIndex.record(dir.admissions);
    return dir;
  }

  /** The cursor if it can be used, else the full-read reason. */
  private usable(
    text: string | undefined,
    scope: string,
    mechanism: LdapCursor['mechanism'],
  ): { ok: true; cursor: LdapCursor } | { ok: false; reason: 'no cursor' | 'cursor expired'; why?: string } {
    if (text === undefined) return { ok: false, reason: 'no cursor' };
    const d = decodeCursor(text);
    if (!d.ok) return { ok: false, reason: 'cursor expired', why: d.why };
    if (d.cursor.mechanism !== mechanism)
      return { ok: false, reason: 'cursor expired', why: `the cursor is for ${d.cursor.mechanism}, the source now uses ${mechanism}` };
    if (d.cursor.scope !== scope)
      return {
        ok: false,
        reason: 'cursor expired',
        why: 'the source configuration (server, bases, filters or ids) changed since the cursor was taken',
      };
    return { ok: true, cursor: d.cursor };
  }

  /** A full read; `mark` was taken before it, so what changes during the read is seen by the next poll. */
  private async full(
    client: Client,
    reason: 'no cursor' | 'cursor expired',
    detail: string | undefined,
    mark: LdapCursor,
    signal: AbortSignal | undefined,
  ): Promise<SourceChanges> {
    const { state } = await this.readAll(client, signal);
    return { kind: 'full', reason, ...(detail === undefined ? {} : { detail }), state, cursor: encodeCursor(mark) };
  }

  /**
   * The server's time before a full read: its published clock, else the latest modify or create
   * timestamp in the naming contexts (one search of two attributes per entry). Never the local clock.
   */
  private async timestampMark(
    client: Client,
    root: RootDse,
    roots: string[],
    scope: string,
    signal: AbortSignal | undefined,
  ): Promise<TimestampCursor> {
    if (root.currentTime !== undefined)
      return { v: 1, mechanism: 'modify-timestamp', scope, t: formatGeneralizedTime(root.currentTime), seen: {} };
    // The whole naming context streams past; only the entries near the latest time are kept.
    const overlapMs = this.host.settings.changes.overlapSeconds * 1000;
    let latest = 0;
    let recent = new Map<string, Changed>();
    // Compacted when it has doubled since the last compaction: linear even when every entry
    // shares the latest second (a bulk load), where a compaction can drop nothing.
    let compactAt = RECENT_COMPACT_MIN;
    await this.scanEach(client, roots, '(objectClass=*)', TIMESTAMP_ATTRS, signal, (key, c) => {
      if (c.stampTime === undefined) return;
      if (c.stampTime > latest) latest = c.stampTime;
      if (c.stampTime < latest - overlapMs) return;
      recent.set(key, c);
      if (recent.size > compactAt) {
        recent = new Map([...recent].filter(([, r]) => (r.stampTime as number) >= latest - overlapMs));
        compactAt = Math.max(RECENT_COMPACT_MIN, recent.size * 2);
      }
    });
    if (latest > 0) this.clock.observe(latest);
    return { v: 1, mechanism: 'modify-timestamp', scope, t: formatGeneralizedTime(latest), seen: seenWithin(recent, latest - overlapMs) };
  }

  private async rootDse(client: Client): Promise<RootDse> {
    const s = this.host.settings;
    const e = await readEntry(client, s, '', ['namingContexts', 'currentTime', 'highestCommittedUSN', 'dsServiceName'], 'the root DSE');
    const v = e === undefined ? undefined : new EntryView(e);
    const usn = Number(v?.first('highestCommittedUSN'));
    return {
      namingContexts: v?.strings('namingContexts') ?? [],
      currentTime: parseGeneralizedTime(v?.first('currentTime')),
      highestCommittedUsn: Number.isSafeInteger(usn) && usn >= 0 && v?.first('highestCommittedUSN') !== undefined ? usn : undefined,
      dsServiceName: v?.first('dsServiceName'),
    };
  }

  /** The DC's invocationId (changes when the DC is restored), else its dsServiceName. */
  private async dcIdentity(client: Client, root: RootDse): Promise<string> {
    const service = root.dsServiceName;
    if (service === undefined) return 'unknown';
    const e = await readEntry(client, this.host.settings, service, ['invocationId'], 'the DC settings (invocationId)', ['invocationId']);
    const id = e === undefined ? undefined : new EntryView(e).buffers('invocationId')[0];
    return id !== undefined && id.length === 16 ? decodeObjectGuid(id) : service;
  }

  /** Every entry matching `filter` under the change roots, keyed by dnKey. */
  private async scan(
    client: Client,
    roots: string[],
    filter: string,
    timeAttrs: string[],
    signal: AbortSignal | undefined,
    controls?: Control[],
  ): Promise<Map<string, Changed>> {
    const out = new Map<string, Changed>();
    await this.scanEach(client, roots, filter, timeAttrs, signal, (key, c) => out.set(key, c), controls);
    return out;
  }

  /** Each entry matching `filter` under the change roots, handed over page by page and not kept. */
  private async scanEach(
    client: Client,
    roots: string[],
    filter: string,
    timeAttrs: string[],
    signal: AbortSignal | undefined,
    onEntry: (key: string, c: Changed) => void,
    controls?: Control[],
  ): Promise<void> {
    const s = this.host.settings;
    const idAttrs = [s.userMap.externalId, ...(s.groups ? [s.groups.map.externalId] : [])];
    for (const baseDn of roots) {
      await pagedSearch(
        client,
        s,
        {
          baseDn,
          filter,
          scope: 'sub',
          attributes: [...new Set([...idAttrs, ...timeAttrs])],
          what: `changed entries under ${baseDn}`,
          ...(controls ? { controls } : {}),
        },
        (entries) => {
          for (const raw of entries) {
            const e = new EntryView(raw);
            onEntry(dnKey(e.dn), changedEntry(e, s));
          }
        },
        signal,
      );
    }
  }

  /** Tombstones changed since `from` (Show Deleted); an empty map, remembered as a blind spot, when the server refuses the control. */
  private async deletedSince(
    client: Client,
    roots: string[],
    from: number,
    signal: AbortSignal | undefined,
  ): Promise<Map<string, Changed>> {
    const { Control } = await import('ldapts');
    try {
      return await this.scan(client, roots, `(&(isDeleted=TRUE)(uSNChanged>=${from}))`, USN_ATTRS, signal, [
        new Control(SHOW_DELETED_OID, { critical: true }),
      ]);
    } catch (e) {
      const code = (e as { cause?: { code?: unknown } }).cause?.code;
      if (typeof code !== 'number' || !CONTROL_REFUSED.has(code)) throw e;
      if (this.deletesVisible)
        this.logger?.warn(
          { source: this.host.describe, resultCode: code },
          'Show Deleted refused: deleted users and groups are left to the full reconcile',
        );
      this.deletesVisible = false;
      return new Map();
    }
  }

  /**
   * The changed entries within `spec` (base DNs, scope, filter) with `attributes`, each handed to
   * `onEntry` once. A few are read by DN with the filter (a search of the scope with the change
   * filter reads every entry on a server that has no index for it, as Samba AD for uSNChanged);
   * more are found by one such search.
   */
  private async changedIn(
    client: Client,
    changed: ReadonlyMap<string, Changed>,
    changedFilter: string,
    spec: { baseDns: string[]; filter: string; scope: 'sub' | 'one' },
    attributes: string[],
    label: string,
    stats: Stats,
    signal: AbortSignal | undefined,
    onEntry: (raw: Entry) => void,
    rejected?: SourceRejection[],
  ): Promise<void> {
    const s = this.host.settings;
    if (changed.size > READ_BY_DN_MAX) {
      await this.host.searchAll(
        client,
        { ...spec, filter: `(&${wrap(spec.filter)}${wrap(changedFilter)})` },
        attributes,
        label,
        stats,
        signal,
        (raw) => {
          if (changed.has(dnKey(raw.dn))) onEntry(raw);
        },
        rejected,
      );
      return;
    }
    for (const [key, c] of changed) {
      if (!spec.baseDns.some((b) => inSearchScope(key, dnKey(b), spec.scope))) continue;
      signal?.throwIfAborted();
      const raw = await readEntryMatching(client, s, c.dn, spec.filter, attributes, `${label}: ${c.dn}`, s.binaryAttributes);
      if (raw !== undefined) onEntry(raw);
    }
  }

  /** The groups read again by DN; undefined when no member list changed since `entries` were read. */
  private async reread(client: Client, entries: Entry[], g: NonNullable<LdapSettings['groups']>): Promise<Entry[] | undefined> {
    const s = this.host.settings;
    const members = (e: Entry): string => new EntryView(e).strings(s.memberAttribute).map(dnKey).sort().join('\n');
    const fresh: Entry[] = [];
    let moved = false;
    for (const e of entries) {
      const now = await readEntryMatching(client, s, e.dn, g.filter, g.attributes, `group ${e.dn}`, s.binaryAttributes);
      if (now === undefined) continue;
      if (members(now) !== members(e)) moved = true;
      fresh.push(now);
    }
    return moved ? fresh : undefined;
  }

  /** The changed entries sorted into upserted, removed and rejected users and groups. */
  private async classify(
    client: Client,
    changedFilter: string,
    changed: ReadonlyMap<string, Changed>,
    deleted: ReadonlyMap<string, Changed>,
    cursor: string,
    signal: AbortSignal | undefined,
  ): Promise<SourceDelta> {
    const s = this.host.settings;
    const stats: Stats = {};
    const rejected: SourceRejection[] = [];
    const timeAttrs = s.changes.mechanism === 'usn' ? USN_ATTRS : TIMESTAMP_ATTRS;

    // Users: the same disabled filter, mapping and admission as read(), on the changed ones only.
    const disabled = new Set<string>();
    if (s.disabled.filter !== undefined)
      await this.changedIn(
        client,
        changed,
        changedFilter,
        { ...s.users, filter: `(&${wrap(s.users.filter)}${wrap(s.disabled.filter)})` },
        ['1.1'],
        'disabled users',
        stats,
        signal,
        (raw) => disabled.add(dnKey(raw.dn)),
      );
    const collector = new UserCollector(s, disabled, rejected);
    const inUserScope = new Set<string>();
    await this.changedIn(
      client,
      changed,
      changedFilter,
      s.users,
      [...s.users.attributes, ...timeAttrs],
      'changed users',
      stats,
      signal,
      (raw) => {
        inUserScope.add(dnKey(raw.dn));
        collector.add(raw);
      },
      rejected,
    );
    this.userIndex?.record(collector);

    // Groups: the changed ones in the group scope, with their complete flattened member lists
    // and every group they are nested in: looked up entry by entry within a bound, else from a
    // full resolution (every user and group), exactly as read() flattens.
    const inGroupScope = new Set<string>();
    const changedGroupIds = new Set<string>();
    const changedGroups: Entry[] = [];
    let groups: NormalizedGroup[] = [];
    const g = s.groups;
    if (g) {
      await this.changedIn(
        client,
        changed,
        changedFilter,
        g,
        g.attributes,
        'changed groups',
        stats,
        signal,
        (raw) => {
          inGroupScope.add(dnKey(raw.dn));
          changedGroups.push(raw);
          const id = readId(new EntryView(raw), g.map.externalId, g.map.externalIdFormat);
          if (id.ok) changedGroupIds.add(id.value);
        },
        rejected,
      );
      if (changedGroups.length > 0) {
        const groupRejections: SourceRejection[] = [];
        const resolve = (entries: Entry[]) =>
          resolveChangedGroups(client, this.host, entries, s.changes.maxMemberLookups, groupRejections, signal, this.userIndex);
        let looked = await resolve(changedGroups);
        // A member that names no entry may have been renamed or moved while this poll read: the
        // groups are read again, and resolved again when a member list changed meanwhile (once:
        // a reference left dangling in the directory stays so, as read() sees it).
        if (looked !== undefined && looked.dangling > 0) {
          const again = await this.reread(client, changedGroups, g);
          if (again !== undefined) {
            groupRejections.length = 0;
            looked = await resolve(again);
          }
        }
        if (looked !== undefined) {
          groups = looked.groups;
          rejected.push(...groupRejections);
        } else {
          const dir = await this.readAll(client, signal);
          const wanted = new Set([...changedGroupIds, ...(s.flattenNested ? ancestorGroups(dir.nested, changedGroupIds) : [])]);
          groups = dir.state.groups.filter((x) => wanted.has(x.externalId));
          for (const r of dir.state.rejected)
            if (r.kind === 'group' && r.dn !== undefined && inGroupScope.has(dnKey(r.dn))) rejected.push(r);
        }
        stats.memberResolution = looked === undefined ? 0 : 1;
      }
    }

    const changedAt: Record<string, number> = {};
    const removedUsers = new Set<string>();
    const removedGroups = new Set<string>();
    const gone = (c: Changed): void => {
      if (c.userId !== undefined) removedUsers.add(c.userId);
      if (c.groupId !== undefined && g) removedGroups.add(c.groupId);
      for (const id of [c.userId, c.groupId]) if (id !== undefined && c.at !== undefined) changedAt[id] = c.at;
    };
    // Not in either scope by the reads above: out of scope where it stands, or renamed, moved or
    // deleted since the change scan saw it. Only the first is a removal now; whatever moved is
    // seen where it went by the next poll (a rename or move stamps the entry again), and a
    // rename within the scope is never taken for a leaver.
    for (const [key, c] of changed) {
      if (inUserScope.has(key) || inGroupScope.has(key)) continue;
      if ((await readEntry(client, s, c.dn, ['1.1'], `changed entry ${c.dn}`)) === undefined) continue;
      gone(c);
    }
    for (const c of deleted.values()) gone(c);
    for (const u of collector.users) {
      const at = changed.get(dnKey(u.attributes['dn'] as string))?.at;
      if (at !== undefined) changedAt[u.externalId] = at;
    }
    for (const c of changed.values())
      if (c.groupId !== undefined && changedGroupIds.has(c.groupId) && c.at !== undefined) changedAt[c.groupId] = c.at;

    const delta: SourceDelta = {
      kind: 'delta',
      cursor,
      users: { upserted: collector.users, removed: [...removedUsers] },
      groups: { upserted: groups, removed: [...removedGroups] },
      rejected,
      changedAt,
    };
    this.logger?.info(
      {
        source: this.host.describe,
        changedEntries: changed.size,
        deletedEntries: deleted.size,
        usersUpserted: delta.users.upserted.length,
        usersRemoved: delta.users.removed.length,
        groupsUpserted: delta.groups.upserted.length,
        groupsRemoved: delta.groups.removed.length,
        rejected: rejected.length,
        membersFrom: stats.memberResolution === undefined ? 'none' : stats.memberResolution === 1 ? 'lookups' : 'full read',
        ms: Math.round(performance.now() - this.pollBegan),
      },
      'LDAP changes read',
    );
    return delta;
  }
}

function changedEntry(e: EntryView, s: LdapSettings): Changed {
  const userId = readId(e, s.userMap.externalId, s.userMap.externalIdFormat);
  const groupId = s.groups ? readId(e, s.groups.map.externalId, s.groups.map.externalIdFormat) : undefined;
  const modified = parseGeneralizedTime(e.first('modifyTimestamp'));
  const created = parseGeneralizedTime(e.first('createTimestamp'));
  const stamps = [modified, created].filter((x): x is number => x !== undefined);
  return {
    dn: e.dn,
    userId: userId.ok ? userId.value : undefined,
    groupId: groupId?.ok ? groupId.value : undefined,
    at: modified ?? parseGeneralizedTime(e.first('whenChanged')) ?? created,
    stampTime: stamps.length > 0 ? Math.max(...stamps) : undefined,
    csn: e.first('entryCSN'),
  };
}

/** The latest modify/create time among `changed`, at least `floor` (a loop: a directory scan can hold millions). */
function latestStamp(changed: ReadonlyMap<string, Changed>, floor: number): number {
  let latest = floor;
  for (const c of changed.values()) if (c.stampTime !== undefined && c.stampTime > latest) latest = c.stampTime;
  return latest;
}

function sameSeen(a: Record<string, string>, b: Record<string, string>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => b[k] === a[k]);
}

/** Entries changed at or after `from` that carry an entryCSN: what the next poll may skip. */
function seenWithin(changed: ReadonlyMap<string, Changed>, from: number): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, c] of changed) if (c.csn !== undefined && c.stampTime !== undefined && c.stampTime >= from) out[key] = c.csn;
  return out;
}

/**
 * Where changed entries are looked for: `changes.baseDn`, else each naming context (root DSE)
 * that holds a user or group base DN, else the base DNs themselves; none under another.
 */
export function changeRoots(s: LdapSettings, root: { namingContexts: string[] }): string[] {
  if (s.changes.baseDns !== undefined) return s.changes.baseDns;
  const contexts = root.namingContexts.map((dn) => ({ dn, key: dnKey(dn) })).sort((a, b) => b.key.length - a.key.length);
  const under = (key: string, parent: string): boolean => key === parent || key.endsWith(`,${parent}`);
  const picked = new Map<string, string>();
  for (const base of [...s.users.baseDns, ...(s.groups?.baseDns ?? [])]) {
    const key = dnKey(base);
    const holder = contexts.find((c) => under(key, c.key));
    picked.set(holder?.key ?? key, holder?.dn ?? base);
  }
  return [...picked].filter(([key]) => ![...picked.keys()].some((other) => other !== key && under(key, other))).map(([, dn]) => dn);
}
