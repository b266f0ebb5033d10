/**
 * Flattened member lists of changed groups without reading the whole directory: the groups a
 * changed group is nested in (server searches on the member attribute; in Active Directory its
 * memberOf back-link, each parent read by DN), the groups nested in
 * those (read by DN), and each member entry looked up by DN with the user filter, mapped and
 * admitted as read() does, or, for more members than the bound, answered from the index of
 * admissions (user-dn-index.ts) after one search for the user DNs present now. Bounded: past
 * `limit` lookups, or where it cannot be exact (AD range retrieval, memberUid), it answers
 * undefined and the caller resolves from a full read.
 */
import type { Client, Entry } from 'ldapts';
import type { NormalizedGroup, SourceRejection } from '../../identity/model.ts';
import type { ChangeReaderHost } from './changes.ts';
import { UserCollector } from './collect-users.ts';
import { dnKey, inSearchScope, stripOptionalUid } from './dn.ts';
import { EntryView } from './entry.ts';
import { MembershipResolver } from './flatten.ts';
import { admitGroupEntry, groupIndex } from './admit-group.ts';
import { readEntry, readEntryMatching } from './paged-search.ts';
import { findRangeSlice } from './range.ts';
import { escapeFilterValue, wrap } from './filter.ts';
import type { UserDnIndex } from './user-dn-index.ts';

export interface ResolvedGroups {
  /** The changed groups and every group they are nested in, with their flattened members. */
  groups: NormalizedGroup[];
  /** Directory lookups spent. */
  lookups: number;
  /**
   * Member DNs in the user scope that name no entry. On a directory that keeps links (Active
   * Directory, OpenLDAP with refint) that is a member renamed or moved between reading the group
   * and looking the member up: the caller reads the groups again.
   */
  dangling: number;
}

/**
 * `changed`: the changed groups' entries in the group scope, with the group attributes (member
 * values included). `rejected` receives the changed groups read() would reject.
 */
export async function resolveChangedGroups(
  client: Client,
  host: Pick<ChangeReaderHost, 'settings' | 'searchAll'>,
  changed: Entry[],
  limit: number,
  rejected: SourceRejection[],
  signal: AbortSignal | undefined,
  admissions?: UserDnIndex,
): Promise<ResolvedGroups | undefined> {
  const s = host.settings;
  const g = s.groups;
  if (!g || s.memberAttribute === 'memberUid') return undefined;
  const stats: Record<string, number> = {};
  let lookups = 0;
  const over = (): boolean => lookups > limit;

  // Which DNs are groups in scope (DNs only: cheap next to member lists).
  const groupKeys = new Set<string>();
  await host.searchAll(client, g, ['1.1'], 'groups', stats, signal, (e) => groupKeys.add(dnKey(e.dn)));

  const entries = new Map<string, Entry>();
  for (const e of changed) entries.set(dnKey(e.dn), e);
  const emit = new Set(entries.keys());

  // Upwards: every group that has a changed group (or one of its parents) as a member.
  if (s.flattenNested && s.changes.mechanism === 'usn' && s.memberAttribute.toLowerCase() === 'member') {
    // Active Directory keeps the back-link: a group's memberOf names the groups it is a member
    // of, read by DN; a search on `member` reads every group's member list (unindexed in Samba:
    // 50 ms a changed group at 500 groups and 25,000 memberships).
    let frontier = changed.map((e) => e.dn);
    while (frontier.length > 0) {
      const next: string[] = [];
      for (const dn of frontier) {
        lookups++;
        if (over()) return undefined;
        const own = await readEntry(client, s, dn, ['memberOf'], `group ${dn} (memberOf)`);
        if (own === undefined) continue;
        if (findRangeSlice(own, 'memberOf')) return undefined;
        for (const parent of new EntryView(own).strings('memberOf')) {
          const key = dnKey(parent);
          if (!groupKeys.has(key)) continue;
          emit.add(key);
          if (entries.has(key)) continue;
          lookups++;
          if (over()) return undefined;
          const e = await readEntry(client, s, parent, g.attributes, `group ${parent}`, s.binaryAttributes);
          if (e === undefined) continue;
          entries.set(key, e);
          next.push(e.dn);
        }
      }
      frontier = next;
    }
  } else if (s.flattenNested) {
    let frontier = changed.map((e) => e.dn);
    while (frontier.length > 0) {
      const next: string[] = [];
      for (const dn of frontier) {
        lookups++;
        const filter = `(&${wrap(g.filter)}(${s.memberAttribute}=${escapeFilterValue(dn)}))`;
        await host.searchAll(client, { ...g, filter }, g.attributes, 'groups containing a changed group', stats, signal, (e) => {
          const key = dnKey(e.dn);
          emit.add(key);
          if (entries.has(key)) return;
          entries.set(key, e);
          next.push(e.dn);
        });
        if (over()) return undefined;
      }
      frontier = next;
    }
  }

  // Downwards: the groups nested in those, and every member that is not a group.
  const userDns = new Map<string, string>();
  const queue = [...entries.values()];
  while (queue.length > 0) {
    const e = queue.pop() as Entry;
    if (s.rangeRetrieval && findRangeSlice(e, s.memberAttribute)) return undefined;
    for (const value of new EntryView(e).strings(s.memberAttribute)) {
      const dn = s.memberAttribute === 'uniqueMember' ? stripOptionalUid(value) : value;
      const key = dnKey(dn);
      if (!groupKeys.has(key)) {
        userDns.set(key, dn);
        continue;
      }
      if (!s.flattenNested || entries.has(key)) continue;
      lookups++;
      if (over()) return undefined;
      const child = await readEntry(client, s, dn, g.attributes, `group ${dn}`, s.binaryAttributes);
      if (child === undefined) continue;
      entries.set(key, child);
      queue.push(child);
    }
  }
  // Members in the user scope. Few: each read by DN with the user filter, mapped and admitted
  // as read() does. Many: one search for the DNs that are users now (deleted, moved or renamed
  // entries are not), each answered from the index of admissions; unknown ones are read.
  // Membership needs ids only: whether a member is disabled does not matter here.
  const inScope = [...userDns].filter(([key]) => s.users.baseDns.some((b) => inSearchScope(key, dnKey(b), s.users.scope)));
  const memberRejections: SourceRejection[] = [];
  const users = new UserCollector(s, new Set(), memberRejections);
  const fromIndex = { userByDn: new Map<string, string>(), rejectedUserDns: new Set<string>() };
  let dangling = 0;
  let toRead = inScope;
  if (lookups + inScope.length > limit) {
    if (admissions === undefined) return undefined;
    const present = new Set<string>();
    lookups++;
    await host.searchAll(client, s.users, ['1.1'], 'users (DNs only)', stats, signal, (e) => present.add(dnKey(e.dn)));
    toRead = [];
    for (const [key, dn] of inScope) {
      if (!present.has(key)) {
        dangling++;
        continue;
      }
      const id = admissions.idOf(key);
      if (id !== undefined) fromIndex.userByDn.set(key, id);
      else if (admissions.isRejected(key)) fromIndex.rejectedUserDns.add(key);
      else toRead.push([key, dn]);
    }
  }
  if (lookups + toRead.length > limit) return undefined;
  for (const [, dn] of toRead) {
    signal?.throwIfAborted();
    lookups++;
    const u = await readEntryMatching(client, s, dn, s.users.filter, s.users.attributes, `user ${dn}`, s.binaryAttributes);
    if (u !== undefined) users.add(u);
    else if ((await readEntry(client, s, dn, ['1.1'], `user ${dn}`)) === undefined) dangling++;
  }
  admissions?.record(users);

  // The same admission and flattening as read(), over the groups reached.
  const resolver = new MembershipResolver({
    userByDn: new Map([...fromIndex.userByDn, ...users.userByDn]),
    userByUid: users.userByUid,
    rejectedUserDns: new Set([...fromIndex.rejectedUserDns, ...users.rejectedUserDns]),
    memberAttribute: s.memberAttribute,
    flattenNested: s.flattenNested,
  });
  const index = groupIndex();
  const emitIds = new Set<string>();
  for (const [key, raw] of entries) {
    const e = new EntryView(raw);
    const admitted = admitGroupEntry(e, s, index);
    if (!admitted.ok) {
      if (emit.has(key)) rejected.push(admitted.rejection);
      continue;
    }
    resolver.add(admitted.value);
    if (emit.has(key)) emitIds.add(admitted.value.externalId);
  }
  const groups = resolver.finish().groups.filter((x) => emitIds.has(x.externalId));
  return { groups, lookups, dangling };
}
