/**
 * Turns the `{ users, groups }` entries of a file source, one by one, into the desired state.
 * Each entry stands alone: an invalid one is rejected with its reason, the rest are kept.
 * Every entry then passes the validator all sources share (identity/validate-user.ts).
 * Duplicates (identity/duplicates.ts): the FIRST entry with an externalId (or a userName,
 * for groups a displayName, compared by `nameKey`) wins and every later one is rejected
 * naming the first — the order of the file decides, never chance. A group member that is not a
 * valid user is left out of the group, counted in `membersUnknown` and reported as a
 * rejection of the group, so it is visible without failing the whole read.
 */
import type { DesiredState, NormalizedGroup, NormalizedUser, SourceRejection } from '../../identity/model.ts';
import { DuplicateIndex } from '../../identity/duplicates.ts';
import { validateGroup, validateUser } from '../../identity/validate-user.ts';
import { formatIssues } from '../../config/format-issues.ts';
import { groupEntrySchema, userEntrySchema, type GroupEntry, type UserEntry } from './entry-schema.ts';
import { fastGroupEntry, fastUserEntry } from './fast-entry.ts';

function refOf(list: 'users' | 'groups', index: number, entry: unknown): string {
  const raw = typeof entry === 'object' && entry !== null ? (entry as Record<string, unknown>)['externalId'] : undefined;
  const id = typeof raw === 'string' || typeof raw === 'number' ? ` (externalId ${raw})` : '';
  return `${list}[${index}]${id}`;
}

/**
 * Where the kept entry with an id is, for messages about later duplicates. Stored as its
 * index (no string per entry, which cost ~15 MB at 100,000 users) unless the ref would
 * not spell the id the same way (a YAML number, padding the schema trimmed).
 */
type Where = number | string;
function where(list: 'users' | 'groups', index: number, raw: unknown, id: string): Where {
  return (raw as Record<string, unknown>)['externalId'] === id ? index : refOf(list, index, raw);
}
function refAt(list: 'users' | 'groups', at: Where, id: string): string {
  return typeof at === 'number' ? `${list}[${at}] (externalId ${id})` : at;
}

/** What identity a raw (possibly invalid) entry still shows: see SourceRejection. */
function identityOf(raw: unknown, nameKey: 'userName' | 'displayName'): Pick<SourceRejection, 'externalId' | 'userName' | 'displayName'> {
  if (typeof raw !== 'object' || raw === null) return {};
  const r = raw as Record<string, unknown>;
  const out: Pick<SourceRejection, 'externalId' | 'userName' | 'displayName'> = {};
  const id = r['externalId'];
  if ((typeof id === 'string' && id.trim() !== '') || typeof id === 'number') out.externalId = String(id);
  const name = r[nameKey];
  if (typeof name === 'string' && name.trim() !== '') out[nameKey] = name.trim();
  return out;
}

function nameConflict(entry: UserEntry): string | undefined {
  for (const part of ['givenName', 'familyName'] as const) {
    const top = entry[part];
    const nested = entry.name?.[part];
    if (top !== undefined && nested !== undefined && top !== nested)
      return `${part} and name.${part} differ ("${top}" vs "${nested}"); set only one`;
  }
  return undefined;
}

/**
 * Plain addresses only (no `{ value, type }`): the list without repeats, in an array of its
 * own size (an array grown by push reserves 17 slots: ~13 MB per 100,000 users); else [].
 */
function plainEmails(emails: UserEntry['emails'], userName: string): string[] {
  const first = emails[0];
  // An address equal to the login name is the login name's string, not a second copy.
  if (emails.length === 1 && typeof first === 'string') return [first === userName ? userName : first];
  const plain: string[] = [];
  for (const e of emails) {
    if (typeof e !== 'string') return [];
    if (!plain.includes(e)) plain.push(e === userName ? userName : e);
  }
  return plain;
}

function toUser(entry: UserEntry): NormalizedUser {
  const user: NormalizedUser = {
    externalId: entry.externalId,
    userName: entry.userName,
    emails: plainEmails(entry.emails, entry.userName),
    active: entry.active,
    attributes: entry.attributes,
  };
  if (user.emails.length === 0 && entry.emails.length > 0) {
    // The address marked primary first, then the file's order; typed entries keep their type.
    const list = entry.emails.map((e) => (typeof e === 'string' ? { value: e } : e));
    list.sort((a, b) => Number('primary' in b && b.primary === true) - Number('primary' in a && a.primary === true));
    for (const e of list) {
      if (!user.emails.includes(e.value)) user.emails.push(e.value);
      if ('type' in e && e.type !== undefined) user.emailTypes = { ...user.emailTypes, [e.value]: e.type };
    }
  }
  const givenName = entry.givenName ?? entry.name?.givenName;
  const familyName = entry.familyName ?? entry.name?.familyName;
  if (givenName !== undefined) user.givenName = givenName;
  if (familyName !== undefined) user.familyName = familyName;
  if (entry.displayName !== undefined) user.displayName = entry.displayName;
  return user;
}

type PendingGroup = { ref: string; entry: GroupEntry } | { rejection: SourceRejection };

/**
 * Normalizes entries one at a time, as a parser delivers them: `user()` and `group()` in the
 * file's order within each list (the lists themselves in either order), then `finish()`.
 * Only the normalized entries and the duplicate indexes are kept, never the raw entries.
 * Members are resolved in `finish()`, once every user is known; until then a group is kept
 * validated (its members as written), so `groups:` may come before `users:` in the file.
 */
export class DirectoryNormalizer {
  private readonly rejected: SourceRejection[] = [];
  private readonly users: NormalizedUser[] = [];
  private readonly userWhere: Where[] = []; // position in `users` → where the entry is in the file
  private readonly rejectedUserRef = new Map<string, string>(); // externalId → ref of a rejected entry
  /** Kept users by externalId and userName: their position in `users`. */
  private readonly userIndex = new DuplicateIndex<number>('userName', (position) => ({
    ref: this.userRef(position),
    name: (this.users[position] as NormalizedUser).userName,
  }));
  private readonly pending: (PendingGroup | undefined)[] = [];
  /** Kept groups: their position in `pending`. */
  private readonly groupIndex = new DuplicateIndex<number>('displayName', (position) => {
    const p = this.pending[position] as { ref: string; entry: GroupEntry };
    return { ref: p.ref, name: p.entry.displayName };
  });

  user(raw: unknown, index: number): undefined {
    const reject = (reason: string): undefined => {
      const ref = refOf('users', index, raw);
      this.rejected.push({ kind: 'user', ref, reason, ...identityOf(raw, 'userName') });
      const id = (raw as Record<string, unknown> | null)?.['externalId'];
      if ((typeof id === 'string' || typeof id === 'number') && !this.userIndex.hasId(String(id)))
        this.rejectedUserRef.set(String(id), ref);
    };
    let entry = fastUserEntry(raw);
    if (!entry) {
      const parsed = userEntrySchema.safeParse(raw);
      if (!parsed.success) return reject(formatIssues(parsed.error.issues, { schema: userEntrySchema, input: raw }).join('; '));
      entry = parsed.data;
    }
    const conflict = nameConflict(entry);
    if (conflict) return reject(conflict);
    const checked = validateUser(toUser(entry));
    if (!checked.ok) return reject(checked.reason);
    const user = checked.value;
    // The reason quotes the file's own spelling, which NFC may have changed.
    const duplicate = this.userIndex.reason(user.externalId, entry.userName);
    if (duplicate !== undefined) return reject(duplicate);
    this.userIndex.add(user.externalId, user.userName, this.users.length);
    this.userWhere.push(where('users', index, raw, user.externalId));
    this.rejectedUserRef.delete(user.externalId);
    this.users.push(user);
  }

  group(raw: unknown, index: number): undefined {
    const ref = refOf('groups', index, raw);
    const reject = (reason: string): undefined => {
      this.pending.push({ rejection: { kind: 'group', ref, reason, ...identityOf(raw, 'displayName') } });
    };
    let entry = fastGroupEntry(raw);
    if (!entry) {
      const parsed = groupEntrySchema.safeParse(raw);
      if (!parsed.success) return reject(formatIssues(parsed.error.issues, { schema: groupEntrySchema, input: raw }).join('; '));
      entry = parsed.data;
    }
    const checked = validateGroup(entry);
    if (!checked.ok) return reject(checked.reason);
    const group = checked.value;
    const duplicate = this.groupIndex.reason(group.externalId, entry.displayName);
    if (duplicate !== undefined) return reject(duplicate);
    this.groupIndex.add(group.externalId, group.displayName, this.pending.length);
    this.pending.push({ ref, entry: group });
  }

  private userRef(position: number): string {
    return refAt('users', this.userWhere[position] as Where, (this.users[position] as NormalizedUser).externalId);
  }

  /** The desired state: users, then groups with their members resolved, rejections in that order. */
  finish(): DesiredState {
    const { rejected, users, pending } = this;
    const usersRejected = rejected.length;
    const groups: NormalizedGroup[] = [];
    let membersUnknown = 0;
    let memberships = 0;
    pending.forEach((p, i) => {
      pending[i] = undefined;
      if (p === undefined) return;
      if ('rejection' in p) return void rejected.push(p.rejection);
      const { ref, entry } = p;
      const members: string[] = [];
      for (const member of new Set(entry.members)) {
        const position = this.userIndex.idAt(member);
        if (position !== undefined) {
          // The user's own string, not the group's copy of it: 2,000,000 members share 1,000,000 ids.
          members.push((this.users[position] as NormalizedUser).externalId);
          continue;
        }
        membersUnknown++;
        const badRef = this.rejectedUserRef.get(member);
        const why = badRef ? `is a rejected user (${badRef})` : 'is not a user in this file';
        rejected.push({
          kind: 'group',
          ref,
          reason: `member "${member}" ${why}; the group is kept without it`,
          externalId: entry.externalId,
          displayName: entry.displayName,
          member,
        });
      }
      memberships += members.length;
      groups.push({ externalId: entry.externalId, displayName: entry.displayName, members });
    });
    return {
      users,
      groups,
      rejected,
      stats: {
        users: users.length,
        groups: groups.length,
        usersRejected,
        groupsRejected: pending.length - groups.length,
        membersUnknown,
        memberships,
      },
    };
  }
}

/** Normalizes already-parsed lists (the YAML path); each raw entry is released once normalized. */
export function normalizeDocument(usersIn: unknown[], groupsIn: unknown[]): DesiredState {
  const normalizer = new DirectoryNormalizer();
  usersIn.forEach((raw, i) => {
    usersIn[i] = undefined;
    normalizer.user(raw, i);
  });
  groupsIn.forEach((raw, i) => {
    groupsIn[i] = undefined;
    normalizer.group(raw, i);
  });
  return normalizer.finish();
}
