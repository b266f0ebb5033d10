/**
 * User entries → admitted users (mapUser, then the shared admission: validation and
 * duplicates) or rejections, and the DN / memberUid indexes membership resolution needs.
 * One path for the full read and the change reader, so both answer the same for an entry.
 */
import type { Entry } from 'ldapts';
import { admitUser } from '../../identity/admit.ts';
import { DuplicateIndex } from '../../identity/duplicates.ts';
import type { NormalizedUser, SourceRejection } from '../../identity/model.ts';
import { dnKey } from './dn.ts';
import { EntryView } from './entry.ts';
import { mapUser, readId } from './map.ts';
import type { IdFormat } from './presets.ts';
import type { LdapSettings } from './settings.ts';

export class UserCollector {
  readonly users: NormalizedUser[] = [];
  readonly userByDn = new Map<string, string>();
  readonly userByUid = new Map<string, string>();
  readonly rejectedUserDns = new Set<string>();
  usersDisabled = 0;
  activeUnknown = 0;
  private readonly index: DuplicateIndex<number>;
  private readonly s: LdapSettings;
  private readonly disabledByFilter: ReadonlySet<string>;
  private readonly rejected: SourceRejection[];

  /** `disabledByFilter`: dnKeys the server matched with `disabled.filter`. Rejections are pushed to `rejected`. */
  constructor(s: LdapSettings, disabledByFilter: ReadonlySet<string>, rejected: SourceRejection[]) {
    this.s = s;
    this.disabledByFilter = disabledByFilter;
    this.rejected = rejected;
    this.index = new DuplicateIndex<number>('userName', (at) => {
      const u = this.users[at] as NormalizedUser;
      return { ref: u.attributes['dn'] as string, name: u.userName };
    });
  }

  add(raw: Entry): void {
    const s = this.s;
    const e = new EntryView(raw);
    const key = dnKey(e.dn);
    // Overlapping base DNs return the same entry twice.
    if (this.userByDn.has(key) || this.rejectedUserDns.has(key)) return;
    const m = mapUser(e, s, this.disabledByFilter.has(key));
    const admitted = m.ok ? admitUser(m.value.user, this.index, this.users.length) : m;
    if (!admitted.ok || !m.ok) {
      this.rejected.push({
        kind: 'user',
        ref: e.dn,
        reason: admitted.ok ? 'unreadable' : admitted.reason,
        ...entryIdentity(e, s.userMap.externalId, s.userMap.externalIdFormat, 'userName', s.userMap.userName),
      });
      this.rejectedUserDns.add(key);
      return;
    }
    const u = admitted.value;
    this.users.push(u);
    this.userByDn.set(key, u.externalId);
    if (s.memberAttribute === 'memberUid')
      for (const uid of e.strings(s.memberUidAttribute)) this.userByUid.set(uid.trim().toLowerCase(), u.externalId);
    if (!u.active) this.usersDisabled++;
    if (m.value.activeUnknown) this.activeUnknown++;
  }
}

/** What a rejected entry still shows (SourceRejection): its id and name when readable, and its DN. */
export function entryIdentity(
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
