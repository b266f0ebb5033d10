/**
 * The change contract next to `Source.read()`: what changed in the directory since a cursor.
 * A source that implements it lets the daemon apply changes within seconds (a targeted
 * reconcile, reconcile/targeted/) instead of waiting for the next full reconcile.
 *
 * The cursor is opaque text the caller keeps durably in the tenant state and passes back
 * unchanged. A source answers with a `full` read (and a fresh cursor) whenever it cannot say
 * exactly what changed: no cursor yet, a cursor the directory no longer honours, or a change
 * that cannot be applied alone. It never guesses: a missed change would leave the platform
 * wrong until the next full reconcile, a wrong one could hand access to the wrong person.
 *
 * Changes are *complete current records*, not field deltas: an upserted user is the user as
 * `read()` would return it now, an upserted group carries its complete flattened member list.
 * Applying the same answer twice, or an older answer after a newer one followed by a full
 * read, therefore converges on what a full reconcile plans.
 */
import type { DesiredState, NormalizedGroup, NormalizedUser, SourceRejection } from '../identity/model.ts';
import type { Source } from './source.ts';

export interface SourceDelta {
  kind: 'delta';
  /** Pass to the next `changes()`. Unchanged when nothing changed. */
  cursor: string;
  users: {
    /** Users created or changed (including disabled ones: `active: false`), as `read()` would return them. */
    upserted: NormalizedUser[];
    /** externalIds of users gone from the source: deleted, or out of the configured scope. */
    removed: string[];
  };
  groups: {
    /** Groups created or changed, each with its complete flattened member list (user externalIds). */
    upserted: NormalizedGroup[];
    /** externalIds of groups gone from the source. */
    removed: string[];
  };
  /** Changed entries the source could not accept (same rules and reasons as `read()`). */
  rejected: SourceRejection[];
  /**
   * When the directory says each object changed (epoch ms, by externalId), where it says so
   * (LDAP modifyTimestamp, AD whenChanged, a Reports API event time, a file's mtime).
   * Propagation time is measured from here; objects without one are timed from detection.
   */
  changedAt: Record<string, number>;
}

export interface SourceFullRead {
  kind: 'full';
  /** Why a full read was needed; shown in logs and on the status page. */
  reason: 'no cursor' | 'cursor expired' | 'cannot apply alone' | 'mechanism unavailable';
  /** Detail for the operator, e.g. which group's nesting changed. */
  detail?: string;
  /** The complete desired state, exactly as `read()` returns it. */
  state: DesiredState;
  /** Taken before the read began, so nothing that changes during the read is lost. */
  cursor: string;
}

export type SourceChanges = SourceDelta | SourceFullRead;

/** A delta that changes nothing, carrying `cursor`; each call returns fresh lists to fill. */
export function emptyDelta(cursor: string): SourceDelta {
  return {
    kind: 'delta',
    cursor,
    users: { upserted: [], removed: [] },
    groups: { upserted: [], removed: [] },
    rejected: [],
    changedAt: {},
  };
}

/** How a source sees changes, and what it cannot see (docs/sources.md, "Change detection"). */
export interface ChangeMechanism {
  /** Stable name, e.g. `ldap-modify-timestamp`, `ad-usn-changed`, `google-reports`, `file-watch`. */
  name: string;
  /** How often the daemon asks for changes by default, in ms. */
  pollIntervalMs: number;
  /** What this mechanism cannot see; the periodic full reconcile repairs it. */
  blindSpots: string[];
}

export interface ChangeSource extends Source {
  /** The mechanism this source uses, as configured (undefined: the source has none right now). */
  changeMechanism(): ChangeMechanism | undefined;
  changes(cursor: string | undefined, signal?: AbortSignal): Promise<SourceChanges>;
}

export function supportsChanges(source: Source): source is ChangeSource {
  const s = source as Partial<ChangeSource>;
  return typeof s.changes === 'function' && typeof s.changeMechanism === 'function' && s.changeMechanism() !== undefined;
}

/** Every externalId a delta names (users and groups, upserted, removed or rejected). */
export function deltaSize(d: SourceDelta): number {
  return d.users.upserted.length + d.users.removed.length + d.groups.upserted.length + d.groups.removed.length + d.rejected.length;
}
