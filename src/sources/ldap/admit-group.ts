/**
 * Group entries → admitted groups (mapGroup, then the shared admission: validation and
 * duplicate display names) or rejections. One path for the full read and the change reader,
 * so both answer the same for an entry.
 */
import { admitGroup } from '../../identity/admit.ts';
import { nfc } from '../../identity/canonical-name.ts';
import { DuplicateIndex } from '../../identity/duplicates.ts';
import type { SourceRejection } from '../../identity/model.ts';
import { entryIdentity } from './collect-users.ts';
import type { EntryView } from './entry.ts';
import { mapGroup, type RawGroup } from './map.ts';
import type { LdapSettings } from './settings.ts';

/** Groups admitted so far, by display name, for the duplicate check. */
export type GroupIndex = DuplicateIndex<{ dn: string; name: string }>;

export function groupIndex(): GroupIndex {
  return new DuplicateIndex<{ dn: string; name: string }>('displayName', (at) => ({ ref: at.dn, name: at.name }));
}

/** The group an entry maps to, admitted into `index`, or the rejection that says why not. */
export function admitGroupEntry(
  e: EntryView,
  s: LdapSettings,
  index: GroupIndex,
): { ok: true; value: RawGroup } | { ok: false; rejection: SourceRejection } {
  const m = mapGroup(e, s, e.strings(s.memberAttribute));
  const admitted = m.ok ? admitGroup(m.value, index, { dn: e.dn, name: nfc(m.value.displayName) }) : m;
  if (admitted.ok) return admitted;
  const g = s.groups;
  return {
    ok: false,
    rejection: {
      kind: 'group',
      ref: e.dn,
      reason: admitted.reason,
      ...(g ? entryIdentity(e, g.map.externalId, g.map.externalIdFormat, 'displayName', g.map.displayName) : { dn: e.dn }),
    },
  };
}
