/**
 * Change detection on a SCIM source server: `filter=meta.lastModified gt "<cursor>"` on
 * /Users and /Groups, where the server filters on it. Support is discovered once: the
 * ServiceProviderConfig must not say `filter.supported: false`, and a probe for changes in
 * the future must come back empty (a server that ignores the filter lists everyone).
 *
 * The cursor is the newest `meta.lastModified` seen (the server's clock), queried again with
 * an overlap of OVERLAP_MS so a record written in the same instant after a page was read is
 * not lost; records already seen in that overlap (id and lastModified) are skipped.
 * Deletions leave no record to find: they are a blind spot, repaired by the full reconcile.
 */
import type { NormalizedGroup, SourceRejection } from '../../identity/model.ts';
import { validateGroup, validateUser } from '../../identity/validate-user.ts';
import { isSyncError } from '../../errors.ts';
import type { PlatformClient } from '../../platform/http-client.ts';
import type { ScimClient } from '../../platform/scim/client.ts';
import type { ScimGroup, ScimResource, ScimUser } from '../../platform/scim/types.ts';
import { emptyDelta, type ChangeMechanism, type SourceDelta } from '../changes.ts';
import { mapScimUser } from './map.ts';

export const SCIM_CHANGE_MECHANISM: ChangeMechanism = {
  name: 'scim-last-modified',
  pollIntervalMs: 60_000,
  blindSpots: [
    'deleted users and groups (a deleted resource has no lastModified to find)',
    'a change the server makes without updating meta.lastModified',
    'nested groups: a change below a nested group is answered by a full read',
  ],
};

/** Re-queried behind the newest lastModified seen (server clocks in whole seconds, writes within a page). */
export const OVERLAP_MS = 2_000;
/** The first cursor after a full read: our clock, this far back (clock skew with the server). */
export const FIRST_CURSOR_SKEW_MS = 5 * 60_000;
/** Member ids read one by one (GET /Users/{id}) before a changed group is left to a full read. */
const MAX_MEMBER_LOOKUPS = 100;

export interface ScimCursor {
  v: 1;
  /** ISO 8601: the newest meta.lastModified seen. */
  since: string;
  /** `id@lastModified` of records within OVERLAP_MS of `since`, already reported. */
  seen: string[];
}

export function encodeScimCursor(c: Omit<ScimCursor, 'v'>): string {
  return JSON.stringify({ v: 1, ...c });
}

export function decodeScimCursor(raw: string): ScimCursor | undefined {
  try {
    const o = JSON.parse(raw) as Partial<ScimCursor> | null;
    if (o?.v === 1 && typeof o.since === 'string' && !Number.isNaN(Date.parse(o.since)) && Array.isArray(o.seen)) return o as ScimCursor;
  } catch {
    // fall through: an unknown cursor is answered by a full read
  }
  return undefined;
}

/** Whether the server filters on meta.lastModified; only auth failures propagate. */
export async function discoverLastModifiedFilter(
  scim: ScimClient,
  http: PlatformClient,
  usersPath: string,
  signal?: AbortSignal,
): Promise<boolean> {
  const spc = await scim.serviceProviderConfig();
  if (spc?.filter?.supported === false) return false;
  const future = new Date(Date.now() + 86_400_000).toISOString();
  try {
    const res = await http.requestJson<{ totalResults?: unknown; Resources?: unknown }>('GET', usersPath, {
      route: 'scim_users',
      query: { filter: `meta.lastModified gt "${future}"`, count: 1, startIndex: 1 },
      what: 'probe meta.lastModified filter',
      ...(signal ? { signal } : {}),
    });
    const listed = Array.isArray(res.body?.Resources) ? res.body.Resources.length : 0;
    const total = res.body?.totalResults;
    return listed === 0 && (total === 0 || total === undefined);
  } catch (e) {
    if (isSyncError(e) && e.kind === 'fatal' && e.status !== 400) throw e;
    return false;
  }
}

/** What the previous complete read knew, to translate member ids and see nesting. */
export interface ScimKnown {
  /** Source `id` → normalized externalId, of accepted users. */
  userIds: Map<string, string>;
  /** Group ids that contain or are contained in another group. */
  nested: Set<string>;
  groupIds: Set<string>;
}

export type ScimDeltaResult = { kind: 'delta'; delta: SourceDelta } | { kind: 'cannot apply alone'; detail: string };

export async function readScimDelta(
  scim: ScimClient,
  cursor: ScimCursor,
  known: ScimKnown | undefined,
  withGroups: boolean,
  signal?: AbortSignal,
): Promise<ScimDeltaResult> {
  const from = new Date(Date.parse(cursor.since) - OVERLAP_MS).toISOString();
  const filter = `meta.lastModified gt "${from}"`;
  const seen = new Set(cursor.seen);
  const fresh = <T extends ScimResource>(r: T): boolean => !seen.has(seenKey(r));
  const users = (await scim.listAll<ScimUser>('Users', { filter, ...(signal ? { signal } : {}) })).filter(fresh);
  const groups = withGroups ? (await scim.listAll<ScimGroup>('Groups', { filter, ...(signal ? { signal } : {}) })).filter(fresh) : [];
  const delta = emptyDelta('');
  const ids = new Map(known?.userIds ?? []);
  for (const u of users) {
    const m = mapScimUser(u);
    const checked = m.ok ? validateUser(m.user) : m;
    const externalId = typeof u.externalId === 'string' && u.externalId !== '' ? u.externalId : u.id;
    stamp(delta, externalId, u);
    if (!checked.ok) {
      delta.rejected.push(rejection(u, checked.reason, externalId));
      continue;
    }
    delta.users.upserted.push(checked.value);
    ids.set(u.id, checked.value.externalId);
  }
  let lookups = 0;
  for (const g of groups) {
    if (known === undefined)
      return { kind: 'cannot apply alone', detail: `group ${g.id} changed and its member ids are not known (no previous read)` };
    if (known.nested.has(g.id)) return { kind: 'cannot apply alone', detail: `group ${g.id} is nested in or contains another group` };
    const externalId = typeof g.externalId === 'string' && g.externalId !== '' ? g.externalId : g.id;
    const name = typeof g.displayName === 'string' ? g.displayName.trim() : '';
    stamp(delta, externalId, g);
    const checked = name === '' ? { ok: false as const, reason: 'missing displayName' } : validateGroup({ externalId, displayName: name });
    if (!checked.ok) {
      delta.rejected.push({
        kind: 'group',
        ref: `Groups/${g.id}`,
        reason: checked.reason,
        externalId,
        ...(name !== '' ? { displayName: name } : {}),
      });
      continue;
    }
    const members = new Set<string>();
    for (const m of g.members ?? []) {
      if (typeof m.value !== 'string') continue;
      if (known.groupIds.has(m.value) || m.type === 'Group')
        return { kind: 'cannot apply alone', detail: `group ${g.id} now contains group ${m.value}` };
      let id = ids.get(m.value);
      if (id === undefined) {
        if (++lookups > MAX_MEMBER_LOOKUPS)
          return { kind: 'cannot apply alone', detail: `more than ${MAX_MEMBER_LOOKUPS} unknown members in changed groups` };
        const u = await scim.getUser(m.value, signal);
        const mapped = u ? mapScimUser(u) : undefined;
        // Not a user (a new nested group) or gone: only a full read can tell what it means.
        if (!mapped?.ok) return { kind: 'cannot apply alone', detail: `group ${g.id} has member ${m.value} that is not a readable user` };
        id = mapped.user.externalId;
        ids.set(m.value, id);
      }
      members.add(id);
    }
    delta.groups.upserted.push({ externalId, displayName: checked.value.displayName, members: [...members] } satisfies NormalizedGroup);
  }
  if (known) for (const [k, v] of ids) known.userIds.set(k, v);
  delta.cursor = users.length + groups.length === 0 ? encodeScimCursor(cursor) : nextCursor(cursor, [...users, ...groups]);
  return { kind: 'delta', delta };
}

function seenKey(r: ScimResource): string {
  return `${r.id}@${r.meta?.lastModified ?? ''}`;
}

function stamp(delta: SourceDelta, externalId: string, r: ScimResource): void {
  const t = Date.parse(r.meta?.lastModified ?? '');
  if (!Number.isNaN(t)) delta.changedAt[externalId] = t;
}

function rejection(u: ScimUser, reason: string, externalId: string): SourceRejection {
  const userName = typeof u.userName === 'string' && u.userName.trim() !== '' ? { userName: u.userName.trim() } : {};
  return { kind: 'user', ref: `Users/${u.id}`, reason, externalId, ...userName };
}

/** The newest lastModified reported, and what was reported within the overlap behind it. */
function nextCursor(prev: ScimCursor, reported: ScimResource[]): string {
  let newest = Date.parse(prev.since);
  for (const r of reported) {
    const t = Date.parse(r.meta?.lastModified ?? '');
    if (!Number.isNaN(t) && t > newest) newest = t;
  }
  const floor = newest - OVERLAP_MS;
  const keep = new Set(prev.seen.filter((k) => Date.parse(k.slice(k.lastIndexOf('@') + 1)) > floor));
  for (const r of reported) if (Date.parse(r.meta?.lastModified ?? '') > floor) keep.add(seenKey(r));
  return encodeScimCursor({ since: new Date(newest).toISOString(), seen: [...keep] });
}

/** The ids a complete read knows, for the next delta. */
export function knownFrom(userIds: Map<string, string>, groups: ScimGroup[]): ScimKnown {
  const groupIds = new Set(groups.map((g) => g.id));
  const nested = new Set<string>();
  for (const g of groups)
    for (const m of g.members ?? [])
      if (typeof m.value === 'string' && groupIds.has(m.value)) {
        nested.add(g.id);
        nested.add(m.value);
      }
  return { userIds, nested, groupIds };
}
