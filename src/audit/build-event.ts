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
 * - `ocsf`: an OCSF event of the class that fits the event name, with the original row in
 *   `raw_data` (see ocsf/map-row.ts).
 * Normalized fields whose column is absent or empty are omitted.
 */
import { EncodedEvent } from './event.ts';
import { lineSafeJson } from './line-safe-json.ts';
import { planColumns, type ColumnOverrides, type ColumnPlan } from './columns.ts';
import { canonicalNames, canonicalRowOf, hashRow, sortedColumnOrder, type PassKeys } from './event-key.ts';
import type { TimestampParser } from './timestamp.ts';
import { OcsfRowMapper } from './ocsf/map-row.ts';

export type FieldStyle = 'ecs' | 'plain' | 'ocsf';

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

/** `toISOString()` with the `YYYY-MM-DDTHH:MM:SS` part kept per second (rows come mostly in time order). */
class IsoFormatter {
  private second = Number.NaN;
  private prefix = '';

  format(ms: number): string {
    const second = Math.floor(ms / 1000);
    if (second !== this.second) {
      const iso = new Date(second * 1000).toISOString();
      // Years outside 0000–9999 (±YYYYYY-…) are rare enough to skip the cache.
      if (iso.length !== 24) return new Date(ms).toISOString();
      this.second = second;
      this.prefix = iso.slice(0, 20);
    }
    const frac = ms - second * 1000;
    return `${this.prefix}${frac < 10 ? '00' : frac < 100 ? '0' : ''}${frac}Z`;
  }
}

/**
 * The document is written as JSON text straight from the row (no object per event): the
 * member names are quoted once per header, each value once per row (the normalized fields
 * reuse the quoted value of their column). Members keep the header's order (an object
 * would have moved numeric-looking names to the front).
 */
export class EventBuilder {
  readonly columns: readonly string[];
  readonly plan: ColumnPlan;
  private readonly opts: BuilderOptions;
  private readonly sortedIdx: number[];
  /** `<length>:<name>` per column in sorted order: the fixed part of the canonical row. */
  private readonly canonicalNames: string[];
  private readonly iso = new IsoFormatter();
  /** `"name":` per column (with its leading comma after the first), as in this style's document. */
  private readonly members: string[];
  private readonly quoted: string[];
  private readonly ocsf: OcsfRowMapper | undefined;
  /** Where the documents are written (see EncodedEvent); a new one when full. */
  private arena = Buffer.allocUnsafeSlow(ARENA_BYTES);
  private used = 0;

  constructor(columns: readonly string[], opts: BuilderOptions) {
    this.columns = columns;
    this.opts = opts;
    this.plan = planColumns(columns, opts.overrides);
    this.sortedIdx = sortedColumnOrder(columns);
    this.canonicalNames = canonicalNames(columns, this.sortedIdx);
    const names = opts.fieldStyle === 'plain' ? plainNames(columns) : columns;
    this.members = names.map((n, i) => `${i === 0 ? '' : ','}${q(n)}:`);
    this.quoted = new Array<string>(columns.length);
    this.ocsf = opts.fieldStyle === 'ocsf' ? new OcsfRowMapper(columns, this.plan) : undefined;
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

  /**
   * The row's key in this pass: its id cell, else the SHA-256 of its canonical form (see
   * event-key.ts), numbered when identical rows repeat; undefined for an id the pass already had.
   */
  keyOf(values: readonly string[], pass: PassKeys): string | undefined {
    const idValue = this.plan.id >= 0 ? values[this.plan.id] : undefined;
    return idValue ? pass.id(idValue) : pass.hashed(hashRow(canonicalRowOf(this.canonicalNames, values, this.sortedIdx)));
  }

  /** The event of a row under its key (keyOf()). */
  build(values: readonly string[], timestampMs: number, key: string): EncodedEvent {
    if (this.ocsf) return this.encode(key, timestampMs, lineSafeJson(this.ocsf.map(values, timestampMs, key)));
    const { plan, members, quoted } = this;
    const idValue = plan.id >= 0 ? values[plan.id] : undefined;
    let cols = '';
    for (let i = 0; i < members.length; i++) {
      const v = q(values[i] ?? '');
      quoted[i] = v;
      cols += members[i] + v;
    }
    const iso = this.iso.format(timestampMs);
    const action = pickQuoted(values, quoted, plan.action);
    const email = pickQuoted(values, quoted, plan.email);
    const ip = pickQuoted(values, quoted, plan.ip);
    const id = idValue ? quoted[plan.id] : `"${key}"`;
    let json: string;
    if (this.opts.fieldStyle === 'ecs') {
      json =
        '{"@timestamp":"' +
        iso +
        '","event":{"id":' +
        id +
        ',"kind":"event","dataset":"platform.audit"' +
        (action === undefined ? '}' : ',"action":' + action + '}');
      if (email !== undefined) json += ',"user":{"email":' + email + '}';
      if (ip !== undefined) json += ',"source":{"ip":' + ip + '}';
      json += ',"platform":{"audit":{' + cols + '}}}';
    } else {
      json = '{"timestamp":"' + iso + '","id":' + id;
      if (action !== undefined) json += ',"action":' + action;
      if (email !== undefined) json += ',"email":' + email;
      if (ip !== undefined) json += ',"ip":' + ip;
      json += cols === '' ? '}' : ',' + cols + '}';
    }
    return this.encode(key, timestampMs, lineSafeJson(json));
  }

  /** The document's UTF-8 bytes appended to the arena (a larger one of its own when it would not fit). */
  private encode(key: string, timestampMs: number, json: string): EncodedEvent {
    const most = 3 * json.length; // UTF-8 bytes per UTF-16 unit, at most
    if (this.used + most > this.arena.length) {
      this.arena = Buffer.allocUnsafeSlow(Math.max(ARENA_BYTES, most));
      this.used = 0;
    }
    const start = this.used;
    this.used += this.arena.write(json, start, 'utf8');
    return new EncodedEvent(key, timestampMs, this.arena, start, this.used);
  }
}

/** Bytes per arena: a few hundred documents; an arena is freed with the last event written into it. */
const ARENA_BYTES = 256 * 1024;

/** The quoted value of a role's column, or undefined when the role has no column or the cell is empty. */
function pickQuoted(values: readonly string[], quoted: readonly string[], idx: number): string | undefined {
  return idx >= 0 && values[idx] ? quoted[idx] : undefined;
}
