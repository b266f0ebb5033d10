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
import { eventFromDoc, type AuditEvent } from './event.ts';
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

export class EventBuilder {
  readonly columns: readonly string[];
  readonly plan: ColumnPlan;
  private readonly opts: BuilderOptions;
  private readonly sortedIdx: number[];
  private readonly occurrences = new OccurrenceCounter();
  /** Column names as they appear in a plain document (collisions renamed once, here). */
  private readonly plainNames: string[];

  constructor(columns: readonly string[], opts: BuilderOptions) {
    this.columns = columns;
    this.opts = opts;
    this.plan = planColumns(columns, opts.overrides);
    this.sortedIdx = sortedColumnOrder(columns);
    this.plainNames = columns.map((c) => (PLAIN_NAMES.has(c) ? `${c}_raw` : c));
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
    const cols = this.columns;
    const fields: Record<string, string> = {};
    for (let i = 0; i < cols.length; i++) fields[cols[i] as string] = values[i] ?? '';
    const idValue = this.plan.id >= 0 ? values[this.plan.id] : undefined;
    const key = idValue
      ? idValue
      : this.occurrences.next(hashRow(canonicalRow(cols, values, this.sortedIdx)), timestampMs);
    const action = this.pick(values, this.plan.action);
    const email = this.pick(values, this.plan.email);
    const ip = this.pick(values, this.plan.ip);
    const iso = new Date(timestampMs).toISOString();
    const doc = this.opts.fieldStyle === 'ecs' ? ecsDoc(iso, key, action, email, ip, fields) : this.plainDoc(iso, key, action, email, ip, values);
    return eventFromDoc(key, timestampMs, doc);
  }

  private pick(values: readonly string[], idx: number): string | undefined {
    if (idx < 0) return undefined;
    const v = values[idx];
    return v ? v : undefined;
  }

  private plainDoc(iso: string, key: string, action?: string, email?: string, ip?: string, values: readonly string[] = []): Record<string, unknown> {
    const doc: Record<string, unknown> = { timestamp: iso, id: key };
    if (action !== undefined) doc['action'] = action;
    if (email !== undefined) doc['email'] = email;
    if (ip !== undefined) doc['ip'] = ip;
    for (let i = 0; i < this.plainNames.length; i++) doc[this.plainNames[i] as string] = values[i] ?? '';
    return doc;
  }
}

function ecsDoc(iso: string, key: string, action: string | undefined, email: string | undefined, ip: string | undefined, fields: Record<string, string>): Record<string, unknown> {
  const event: Record<string, string> = { id: key, kind: 'event', dataset: 'platform.audit' };
  if (action !== undefined) event['action'] = action;
  const doc: Record<string, unknown> = { '@timestamp': iso, event };
  if (email !== undefined) doc['user'] = { email };
  if (ip !== undefined) doc['source'] = { ip };
  doc['platform'] = { audit: fields };
  return doc;
}
