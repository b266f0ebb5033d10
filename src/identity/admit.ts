/**
 * The one step every source takes for each mapped user or group: validate it (validate-user.ts),
 * look for an earlier entry with its id or name (duplicates.ts), and record it when admitted.
 * The result is the entry in canonical form, or the reason it is rejected.
 */
import type { DuplicateIndex } from './duplicates.ts';
import type { NormalizedGroup, NormalizedUser } from './model.ts';
import { validateGroup, validateUser, type Checked } from './validate-user.ts';

/** `at`: where the source keeps the entry if admitted (recorded in `index` for later duplicates). */
export function admitUser<W>(user: NormalizedUser, index: DuplicateIndex<W>, at: W): Checked<NormalizedUser> {
  const checked = validateUser(user);
  if (!checked.ok) return checked;
  // Reasons quote the source's own spelling, which NFC may have changed.
  const duplicate = index.reason(user.externalId, user.userName);
  if (duplicate !== undefined) return { ok: false, reason: duplicate };
  index.add(user.externalId, user.userName, at);
  return checked;
}

export function admitGroup<G extends Pick<NormalizedGroup, 'externalId' | 'displayName'>, W>(
  group: G,
  index: DuplicateIndex<W>,
  at: W,
): Checked<G> {
  const checked = validateGroup(group);
  if (!checked.ok) return checked;
  const duplicate = index.reason(group.externalId, group.displayName);
  if (duplicate !== undefined) return { ok: false, reason: duplicate };
  index.add(group.externalId, group.displayName, at);
  return checked;
}
