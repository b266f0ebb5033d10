/**
 * CSV row → AuditEvent: the event time, the stable key and the JSON document the sinks emit
 * (the original columns plus normalized fields). One builder per export stream (it holds the header's plan).
 *
 * Field styles (the document shape):
 * - `ecs` (nested objects, as Elasticsearch and most SIEMs expect):
 *   `{ "@timestamp", "event": { "id", "action", "kind": "event", "dataset": "platform.audit" },
 *      "user": { "email" }, "source": { "ip" }, "platform": { "audit": { <original columns> } } }`
 * - `plain` (flat): `{ "timestamp", "id", "action", "email", "ip", <original columns> }`; an
 *   original column whose name collides with a normalized field (or with the file sink's
 *   `_key`/`_ts`) is kept as `<name>_raw`.
 * Normalized fields whose column is absent or empty are omitted.
 */
import type { AuditEvent } from './event.ts';
import { planColumns, type ColumnOverrides, type ColumnPlan } from './columns.ts';
import { OccurrenceCounter, canonicalRow, hashRow, sortedColumnOrder } from './event-key.ts';
import type { TimestampParser } from './timestamp.ts';

export type FieldStyle = 'ecs' | 'plain';

export interface BuilderOptions {
  fieldStyle: FieldStyle;
  overrides: ColumnOverrides;
  parseTimestamp: TimestampParser;
}

/** A row that cannot become an event (no usable timestamp): dead-lettered by the caller. */
export interface RowProblem {
  code: 'E_BAD_TIMESTAMP';
  reason: string;
}

const PLAIN_NAMES = new Set(['timestamp', 'id', 'action', 'email', 'ip', '_key', '_ts']);
const q = JSON.stringify as (s: string) => string;

/**
 * Plain-style names: a column colliding with a normalized field (or the file sink's fields)
 * becomes `<name>_raw`, and `_raw` is repeated until the name is free, so no two members of
 * a document share a name.
 */
function plainNames(columns: readonly string[]): string[] {
  const taken = new Set<string>(columns);
  return columns.map((c) => {
    if (!PLAIN_NAMES.has(c)) return c;
    let name = `${c}_raw`;
    while (taken.has(name) || PLAIN_NAMES.has(name)) name += '_raw';
    taken.add(name);
    return name;
  });
}

/**
 * The document is written as JSON text straight from the row (no object per event): the
 * member names are quoted once per header, each value once per row. Members keep the
 * header's order (an object would have moved numeric-looking names to the front).
 */
export class EventBuilder {
  readonly columns: readonly string[];
  readonly plan: ColumnPlan;
  private readonly opts: BuilderOptions;
  private readonly sortedIdx: number[];
  private readonly occurrences = new OccurrenceCounter();
  /** `"name":` per column, as it appears in this style's document. */
  private readonly members: string[];

  constructor(columns: readonly string[], opts: BuilderOptions) {
    this.columns = columns;
    this.opts = opts;
    this.plan = planColumns(columns, opts.overrides);
    this.sortedIdx = sortedColumnOrder(columns);
    const names = opts.fieldStyle === 'plain' ? plainNames(columns) : columns;
    this.members = names.map((n) => `${q(n)}:`);
  }

  /** The timestamp of a row, or a problem. Separate from build() so out-of-window rows stay cheap. */
  timestampOf(values: readonly string[]): number | RowProblem {
    const raw = values[this.plan.timestamp];
    const ms = raw === undefined ? undefined : this.opts.parseTimestamp(raw);
    if (ms === undefined) {
      return { code: 'E_BAD_TIMESTAMP', reason: `column "${this.columns[this.plan.timestamp]}" holds no readable timestamp` };
    }
    return ms;
  }

  build(values: readonly string[], timestampMs: number): AuditEvent {
    const { plan } = this;
    const idValue = plan.id >= 0 ? values[plan.id] : undefined;
    const key = idValue ? idValue : this.occurrences.next(hashRow(canonicalRow(this.columns, values, this.sortedIdx)), timestampMs);
    const iso = q(new Date(timestampMs).toISOString());
    const action = pick(values, plan.action);
    const email = pick(values, plan.email);
    const ip = pick(values, plan.ip);
    let json: string;
    if (this.opts.fieldStyle === 'ecs') {
      json = `{"@timestamp":${iso},"event":{"id":${q(key)},"kind":"event","dataset":"platform.audit"${action === undefined ? '' : `,"action":${q(action)}`}}`;
      if (email !== undefined) json += `,"user":{"email":${q(email)}}`;
      if (ip !== undefined) json += `,"source":{"ip":${q(ip)}}`;
      json += `,"platform":{"audit":{${this.columnMembers(values)}}}}`;
    } else {
      json = `{"timestamp":${iso},"id":${q(key)}`;
      if (action !== undefined) json += `,"action":${q(action)}`;
      if (email !== undefined) json += `,"email":${q(email)}`;
      if (ip !== undefined) json += `,"ip":${q(ip)}`;
      const rest = this.columnMembers(values);
      json += rest === '' ? '}' : `,${rest}}`;
    }
    return { key, timestampMs, json, noReservedMembers: true };
  }

  /** `"col":"value",…` for every column of the header (a missing cell is ""). */
  private columnMembers(values: readonly string[]): string {
    const m = this.members;
    let s = '';
    for (let i = 0; i < m.length; i++) s += `${i === 0 ? '' : ','}${m[i] as string}${q(values[i] ?? '')}`;
    return s;
  }
}

function pick(values: readonly string[], idx: number): string | undefined {
  if (idx < 0) return undefined;
  const v = values[idx];
  return v ? v : undefined;
}
