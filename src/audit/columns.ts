/**
 * Which CSV column plays which role. The export's columns are undocumented, so roles are
 * found by name among common spellings (kept here as data), unless the config names them.
 * Matching ignores case, spaces, `_`, `-` and `.`: "Created At" = "created_at" = "createdAt".
 */

export type ColumnRole = 'timestamp' | 'id' | 'action' | 'email' | 'ip';

/** Candidates per role, most specific first. */
export const COLUMN_CANDIDATES: Readonly<Record<ColumnRole, readonly string[]>> = {
  timestamp: [
    'timestamp',
    'event_time',
    'event_timestamp',
    'time',
    'created_at',
    'createdAt',
    'date',
    'datetime',
    'occurred_at',
    'logged_at',
    '@timestamp',
  ],
  id: ['event_id', 'Event ID', 'id', 'uuid', 'event_uuid', 'audit_id', 'log_id'],
  action: ['event_name', 'Event Name', 'eventName', 'event', 'action', 'event_type', 'type', 'activity'],
  email: ['user_email', 'User Email', 'userEmail', 'email', 'actor_email', 'user', 'actor'],
  ip: ['ip_address', 'IP Address', 'ip', 'source_ip', 'client_ip', 'remote_addr', 'remote_ip'],
};

export function normalizeColumnName(name: string): string {
  return name.toLowerCase().replace(/[\s_\-.]/g, '');
}

export interface ColumnOverrides {
  timestamp?: string | undefined;
  id?: string | undefined;
  action?: string | undefined;
  email?: string | undefined;
  ip?: string | undefined;
}

/** Column index per role for one header; -1 when the role has no column. */
export type ColumnPlan = Record<ColumnRole, number>;

export const ROLES: readonly ColumnRole[] = ['timestamp', 'id', 'action', 'email', 'ip'];

/**
 * Header cells → unique column names: trimmed, empty ones named `column_<n>`, repeated ones
 * suffixed `_2`, `_3`… so no value is overwritten when the row becomes an object.
 */
export function uniqueColumnNames(header: readonly string[]): string[] {
  const seen = new Map<string, number>();
  return header.map((raw, i) => {
    const base = raw.trim() || `column_${i + 1}`;
    const n = (seen.get(base) ?? 0) + 1;
    seen.set(base, n);
    return n === 1 ? base : `${base}_${n}`;
  });
}

/** A configured column must exist (exact name first, then the normalized match). */
function findColumn(columns: readonly string[], wanted: string): number {
  const exact = columns.indexOf(wanted);
  if (exact >= 0) return exact;
  const norm = normalizeColumnName(wanted);
  return columns.findIndex((c) => normalizeColumnName(c) === norm);
}

export function planColumns(columns: readonly string[], overrides: ColumnOverrides = {}): ColumnPlan {
  const normalized = columns.map(normalizeColumnName);
  const plan = { timestamp: -1, id: -1, action: -1, email: -1, ip: -1 } as ColumnPlan;
  for (const role of ROLES) {
    const configured = overrides[role];
    if (configured !== undefined) {
      plan[role] = findColumn(columns, configured);
      continue;
    }
    for (const candidate of COLUMN_CANDIDATES[role]) {
      const i = normalized.indexOf(normalizeColumnName(candidate));
      if (i >= 0) {
        plan[role] = i;
        break;
      }
    }
  }
  return plan;
}

/** Columns added and removed between two headers (order changes are not drift). */
export function columnDrift(previous: readonly string[], current: readonly string[]): { added: string[]; removed: string[] } {
  const prev = new Set(previous);
  const cur = new Set(current);
  return {
    added: current.filter((c) => !prev.has(c)),
    removed: previous.filter((c) => !cur.has(c)),
  };
}
