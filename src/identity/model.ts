/**
 * The normalized identity model every source produces and the reconcile engine consumes.
 * Sources map their native records into this shape; SCIM mapping turns it into resources.
 */

export interface NormalizedUser {
  /** Stable id in the source (entryUUID, objectGUID, HR id…). Matching key #1. */
  externalId: string;
  /** Login name; compared case-insensitively everywhere. Matching key #2. */
  userName: string;
  givenName?: string;
  familyName?: string;
  displayName?: string;
  /** First entry is the primary address. */
  emails: string[];
  /** The source's own `type` of an address (key: the address as in `emails`), where it has one. */
  emailTypes?: Record<string, string>;
  active: boolean;
  /** Any further source fields, available to attribute mapping and scoping filters. */
  attributes: Record<string, unknown>;
}

export interface NormalizedGroup {
  externalId: string;
  displayName: string;
  /** Member user externalIds (already flattened; only users, never groups). */
  members: string[];
}

/** What a source returns: the complete desired state, or it throws. Never partial. */
export interface DesiredState {
  users: NormalizedUser[];
  groups: NormalizedGroup[];
  /** Objects the source could not read or normalize, with the reason; never silently dropped. */
  rejected: SourceRejection[];
  /** Counters a source wants to report (e.g. members outside scope skipped). */
  stats: Record<string, number>;
}

export interface SourceRejection {
  kind: 'user' | 'group' | 'row';
  /** Where it came from: a DN, a file path with line/index, a SCIM id. */
  ref: string;
  reason: string;
}

export function userKey(userName: string): string {
  return userName.toLowerCase();
}
