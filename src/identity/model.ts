import { nameKey } from './canonical-name.ts';

/**
 * The normalized identity model every source produces and the reconcile engine consumes.
 * Sources map their native records into this shape; SCIM mapping turns it into resources.
 */

export interface NormalizedUser {
  /** Stable id in the source (entryUUID, objectGUID, HR id…). Matching key #1. */
  externalId: string;
  /** Login name, in NFC; matched by its `nameKey` (matching key #2), written exactly as the source spells it. */
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
  /** `row`: a CSV row (a user with the groups of its groups column). */
  kind: 'user' | 'group' | 'row';
  /** Where it came from: a DN, a file path with line/index, a SCIM id. */
  ref: string;
  reason: string;
  /**
   * The identity that could still be read from the rejected entry. Present-but-invalid is
   * present: the planner never deprovisions, deletes or removes from a group the platform
   * object these name (reconcile.md, "Present but invalid"). A rejection with none of them
   * (and no `member`) is *unidentified*: it holds deprovisioning of its kind via the guard.
   */
  externalId?: string;
  /** Users and rows. */
  userName?: string;
  /** Groups. */
  displayName?: string;
  /** LDAP: the entry's DN (reported, not matched: platform objects carry no DN). */
  dn?: string;
  /** Rows: externalIds of the groups the rejected row listed (kept from deletion). */
  memberOf?: string[];
  /**
   * Set when only one member reference of a group was rejected (the group itself is valid):
   * the member's externalId; `externalId` is then the group's. The platform user it names
   * is not removed from that group.
   */
  member?: string;
}

/** True when the rejection names no object at all (see SourceRejection). */
export function isUnidentified(r: SourceRejection): boolean {
  return r.member === undefined && r.externalId === undefined && r.userName === undefined && r.displayName === undefined;
}

/** The comparison key of a userName (canonical-name.ts: NFC and full case folding). */
export function userKey(userName: string): string {
  return nameKey(userName);
}
