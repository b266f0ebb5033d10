/**
 * The admin audit log as a change feed: Reports API `activities.list` (userKey `all`,
 * application `admin`) from a cursor, reduced to which users and groups an administrator
 * touched. Google lists an event some time after it happened (data lag), so every poll
 * re-reads `overlapSeconds` behind the newest event seen and skips events already handled,
 * by id (`id.time` + `id.uniqueQualifier`).
 *
 * The cursor: the newest event time seen (ms) and the ids of the events inside the overlap
 * window behind it.
 */
import type { admin_reports_v1 } from '@googleapis/admin';
import { listAll, type CallEnv } from './paged.ts';

type Activity = admin_reports_v1.Schema$Activity;

export interface ReportsCursor {
  v: 1;
  /** Epoch ms: the newest event time seen (or, with none yet, when the cursor was taken). */
  newest: number;
  /** `time/uniqueQualifier` of the events seen within the overlap window behind `newest`. */
  seen: string[];
}

export function encodeReportsCursor(c: Omit<ReportsCursor, 'v'>): string {
  return JSON.stringify({ v: 1, ...c });
}

export function decodeReportsCursor(raw: string): ReportsCursor | undefined {
  try {
    const o = JSON.parse(raw) as Partial<ReportsCursor> | null;
    if (o?.v === 1 && Number.isFinite(o.newest) && Array.isArray(o.seen) && o.seen.every((x) => typeof x === 'string'))
      return o as ReportsCursor;
  } catch {
    // not a cursor of this source: answered by a full read
  }
  return undefined;
}

/** What the admin events since a cursor name (keys are lower-cased e-mail addresses). */
export interface AdminChanges {
  /** Users created or changed in any way, by their address at the time (old and new on a rename). */
  users: Map<string, number>;
  deletedUsers: Map<string, number>;
  groups: Map<string, number>;
  deletedGroups: Map<string, number>;
  /** Events not seen before. */
  events: number;
  /** The cursor after these events. */
  cursor: string;
}

/** Events whose parameters name a user other than the one changed (the member of a group event). */
const USER_EVENTS_TYPE = 'USER_SETTINGS';
const GROUP_EVENTS_TYPE = 'GROUP_SETTINGS';

export interface ReportsInput {
  reports: admin_reports_v1.Admin;
  env: CallEnv;
  callOptions: { retry: false; timeout: number; signal?: AbortSignal };
  overlapMs: number;
}

/** Every admin activity with a time at or after `fromMs`, oldest first (the API lists newest first). */
export async function listAdminActivities(r: ReportsInput, fromMs: number): Promise<Activity[]> {
  const items: Activity[] = [];
  await listAll<Activity>(
    'activities.list admin',
    'items',
    (pageToken) =>
      r.reports.activities.list(
        {
          userKey: 'all',
          applicationName: 'admin',
          startTime: new Date(Math.max(0, fromMs)).toISOString(),
          maxResults: 1000,
          ...(pageToken ? { pageToken } : {}),
        },
        r.callOptions,
      ),
    r.env,
    (page) => items.push(...page),
  );
  return items.reverse();
}

const idOf = (a: Activity): string | undefined =>
  typeof a.id?.time === 'string' && typeof a.id.uniqueQualifier === 'string' ? `${a.id.time}/${a.id.uniqueQualifier}` : undefined;

/** A cursor that takes every event listed now as seen: for a full read about to start. */
export async function startCursor(r: ReportsInput, nowMs: number): Promise<string> {
  const listed = await listAdminActivities(r, nowMs - r.overlapMs);
  let newest = nowMs;
  for (const a of listed) newest = Math.max(newest, Date.parse(a.id?.time ?? '') || 0);
  return encodeReportsCursor({ newest, seen: listed.map(idOf).filter((x): x is string => x !== undefined) });
}

/** The admin events after `cursor`, reduced to the users and groups they name. */
export async function readAdminChanges(r: ReportsInput, cursor: ReportsCursor): Promise<AdminChanges> {
  const listed = await listAdminActivities(r, cursor.newest - r.overlapMs);
  const seen = new Set(cursor.seen);
  const out: AdminChanges = {
    users: new Map(),
    deletedUsers: new Map(),
    groups: new Map(),
    deletedGroups: new Map(),
    events: 0,
    cursor: '',
  };
  const note = (m: Map<string, number>, email: string | undefined, at: number): void => {
    if (email === undefined || email === '') return;
    const k = email.toLowerCase();
    m.set(k, Math.max(m.get(k) ?? 0, at));
  };
  let newest = cursor.newest;
  const fresh: Array<{ id: string; at: number }> = [];
  for (const a of listed) {
    const id = idOf(a);
    const at = Date.parse(a.id?.time ?? '');
    if (id === undefined || Number.isNaN(at) || seen.has(id)) continue;
    fresh.push({ id, at });
    newest = Math.max(newest, at);
    for (const e of a.events ?? []) {
      const p = new Map((e.parameters ?? []).map((x) => [x.name ?? '', x.value ?? undefined]));
      if (e.type === USER_EVENTS_TYPE) {
        if (e.name === 'DELETE_USER') note(out.deletedUsers, p.get('USER_EMAIL'), at);
        else note(out.users, p.get('USER_EMAIL'), at);
        // A rename names the old address; the user now answers to the new one.
        if (e.name === 'RENAME_USER') note(out.users, p.get('NEW_VALUE'), at);
      } else if (e.type === GROUP_EVENTS_TYPE) {
        if (e.name === 'DELETE_GROUP') note(out.deletedGroups, p.get('GROUP_EMAIL'), at);
        else note(out.groups, p.get('GROUP_EMAIL'), at);
        if (e.name === 'CHANGE_GROUP_EMAIL') note(out.groups, p.get('NEW_VALUE'), at);
      }
    }
  }
  out.events = fresh.length;
  if (fresh.length === 0) {
    out.cursor = encodeReportsCursor(cursor);
    return out;
  }
  const floor = newest - r.overlapMs;
  const keep = new Set(cursor.seen.filter((k) => Date.parse(k.slice(0, k.indexOf('/'))) >= floor));
  for (const f of fresh) if (f.at >= floor) keep.add(f.id);
  out.cursor = encodeReportsCursor({ newest, seen: [...keep] });
  return out;
}
