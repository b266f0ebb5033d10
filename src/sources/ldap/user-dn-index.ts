/**
 * What the last admission said of each user DN (dnKey → externalId, or rejected), kept by the
 * change reader from its full reads and from every delta since: any change to a user entry
 * moves its modifyTimestamp / uSNChanged, so the delta that carries it updates its line here.
 *
 * A large changed group's members then resolve without reading each member again
 * (changed-groups.ts). The index is never trusted for existence: a DN is a user only if a
 * search of the user scope with the user filter returns it now, so a deleted, renamed or moved
 * entry (whose old line stays here) is not a member, exactly as for read().
 */
import type { UserCollector } from './collect-users.ts';

export class UserDnIndex {
  private readonly ids = new Map<string, string>();
  private readonly rejected = new Set<string>();

  /** The admissions of a full read, or of the changed users of a delta (a later answer replaces an earlier one). */
  record(c: Pick<UserCollector, 'userByDn' | 'rejectedUserDns'>): void {
    for (const [key, id] of c.userByDn) {
      this.ids.set(key, id);
      this.rejected.delete(key);
    }
    for (const key of c.rejectedUserDns) {
      this.rejected.add(key);
      this.ids.delete(key);
    }
  }

  /** The externalId `key` was admitted with; undefined when rejected or never seen. */
  idOf(key: string): string | undefined {
    return this.ids.get(key);
  }

  isRejected(key: string): boolean {
    return this.rejected.has(key);
  }

  get size(): number {
    return this.ids.size + this.rejected.size;
  }
}
