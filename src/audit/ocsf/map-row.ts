/**
 * CSV row → OCSF event (`fieldStyle: ocsf`): the class and activity from the event name
 * (classes.ts), the platform's fields where OCSF puts them, the columns OCSF has no place for
 * in `unmapped`, and the whole original row, as JSON text in header order, in `raw_data`.
 *
 * What the export's columns mean is not documented; the assumptions, all here:
 * - the user column names the user who acted (`actor.user`) and, for Authentication, the user
 *   who signed in (`user`); for Account Change and Group Management `user` is the account the
 *   event changed when a details column holds a JSON object with a `target` string, else the
 *   row's user; Group Management needs a group: a `group` string in the details, else the
 *   event is an Account Change `Other`;
 * - a severity column (`severity`, `level`, `risk`…) is read when present; without one an
 *   event is Informational;
 * - a user-agent column goes to `http_request.user_agent` (API Activity only).
 * A user value that is not an e-mail address is `user.name`; an address value that is not an
 * IP address is `src_endpoint.name`.
 */
import { isIP } from 'node:net';
import { normalizeColumnName, type ColumnPlan } from '../columns.ts';
import {
  ACCOUNT_CHANGE,
  API_ACTIVITY,
  AUTHENTICATION,
  classifyEventName,
  GROUP_MANAGEMENT,
  OCSF_EMAIL,
  OCSF_VERSION,
  profilesOf,
  UNKNOWN_ENDPOINT,
  UNKNOWN_USER,
  SEVERITY_IDS,
  SEVERITY_NAMES,
  STATUS_NAMES,
  type OcsfClass,
} from './classes.ts';

/** `metadata.product`: the platform whose audit log the events come from. */
export const OCSF_PRODUCT = { name: 'audit-log', vendor_name: 'analytics-platform' } as const;

/** Extra columns the OCSF mapping reads, by normalized name (see columns.ts). */
const EXTRA_CANDIDATES = {
  userAgent: ['useragent', 'ua', 'httpuseragent', 'client'],
  severity: ['severity', 'level', 'risklevel', 'risk', 'severitylevel'],
  details: ['details', 'detail', 'eventdata', 'data', 'payload', 'context'],
} as const;

/** A details cell longer than this is not parsed (it stays whole in `unmapped`). */
const MAX_DETAILS_CHARS = 64 * 1024;

type Json = string | number | boolean | null | Json[] | { [k: string]: Json };
type JsonObject = { [k: string]: Json };

/** An address is the user's name on the platform (its users sign in with it) and its `email_addr`. */
function userOf(text: string | undefined): JsonObject | undefined {
  if (!text) return undefined;
  return OCSF_EMAIL.test(text) ? { name: text, email_addr: text } : { name: text };
}

function severityOf(text: string | undefined): { id: number; name: string } {
  if (!text) return { id: 1, name: 'Informational' };
  const t = text.trim().toLowerCase();
  const id = /^[0-6]$/.test(t) ? Number(t) : Object.hasOwn(SEVERITY_IDS, t) ? SEVERITY_IDS[t] : undefined;
  return id === undefined ? { id: 99, name: text } : { id, name: SEVERITY_NAMES[id]! };
}

/** `target` and `group` strings of a details cell holding a JSON object. */
function detailsOf(text: string | undefined): { target?: string; group?: string } {
  if (!text || text.length > MAX_DETAILS_CHARS || !text.trimStart().startsWith('{')) return {};
  try {
    const v = JSON.parse(text) as unknown;
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return {};
    const o = v as Record<string, unknown>;
    return {
      ...(typeof o['target'] === 'string' && o['target'] ? { target: o['target'] } : {}),
      ...(typeof o['group'] === 'string' && o['group'] ? { group: o['group'] } : {}),
    };
  } catch {
    return {};
  }
}

function findExtra(normalized: readonly string[], candidates: readonly string[], taken: ReadonlySet<number>): number {
  for (const c of candidates) {
    const i = normalized.findIndex((n, idx) => n === c && !taken.has(idx));
    if (i >= 0) return i;
  }
  return -1;
}

/** One mapper per export header (it holds which column is what). */
export class OcsfRowMapper {
  private readonly columns: readonly string[];
  private readonly plan: ColumnPlan;
  private readonly userAgent: number;
  private readonly severity: number;
  private readonly details: number;
  /** `"name":` per column, for raw_data. */
  private readonly rawMembers: string[];

  constructor(columns: readonly string[], plan: ColumnPlan) {
    this.columns = columns;
    this.plan = plan;
    const normalized = columns.map(normalizeColumnName);
    const taken = new Set(Object.values(plan).filter((i) => i >= 0));
    this.userAgent = findExtra(normalized, EXTRA_CANDIDATES.userAgent, taken);
    this.severity = findExtra(normalized, EXTRA_CANDIDATES.severity, taken);
    this.details = findExtra(normalized, EXTRA_CANDIDATES.details, taken);
    this.rawMembers = columns.map((c, i) => `${i === 0 ? '' : ','}${JSON.stringify(c)}:`);
  }

  /** The OCSF event of a row, as JSON text (not yet line-safe). */
  map(values: readonly string[], timestampMs: number, key: string): string {
    const { plan } = this;
    const cell = (i: number): string | undefined => (i >= 0 && values[i] ? values[i] : undefined);
    const placed = new Set<number>([plan.timestamp, plan.id, plan.action, plan.email, plan.ip, this.severity]);

    const action = cell(plan.action);
    let rule = classifyEventName(action);
    const details = rule.cls === AUTHENTICATION ? {} : detailsOf(cell(this.details));
    if (rule.cls === GROUP_MANAGEMENT && details.group === undefined) rule = { ...rule, cls: ACCOUNT_CHANGE, activityId: 99 };
    const cls: OcsfClass = rule.cls;
    const activityName = rule.activityName ?? cls.activities[rule.activityId]!;
    const profiles = profilesOf(cls);
    const severity = severityOf(cell(this.severity));
    const rowUser = userOf(cell(plan.email));

    const event: JsonObject = {
      activity_id: rule.activityId,
      activity_name: activityName,
      category_uid: cls.categoryUid,
      category_name: cls.categoryName,
      class_uid: cls.uid,
      class_name: cls.name,
      type_uid: cls.uid * 100 + rule.activityId,
      type_name: `${cls.name}: ${activityName}`,
      time: timestampMs,
      severity_id: severity.id,
      severity: severity.name,
      status_id: rule.status,
      status: STATUS_NAMES[rule.status]!,
      ...(action === undefined ? {} : { message: action }),
      metadata: {
        version: OCSF_VERSION,
        ...(profiles ? { profiles } : {}),
        product: { ...OCSF_PRODUCT },
        uid: key,
        log_name: 'platform.audit',
        ...(action === undefined ? {} : { event_code: action }),
        ...(cell(plan.timestamp) === undefined ? {} : { original_time: cell(plan.timestamp)! }),
      },
      actor: { user: rowUser ?? { ...UNKNOWN_USER } },
    };

    const ip = cell(plan.ip);
    const srcEndpoint: JsonObject | undefined = ip === undefined ? undefined : isIP(ip) ? { ip } : { name: ip };
    if (srcEndpoint) event['src_endpoint'] = srcEndpoint;

    if (cls === AUTHENTICATION) {
      event['user'] = rowUser ?? { ...UNKNOWN_USER };
    } else if (cls === ACCOUNT_CHANGE || cls === GROUP_MANAGEMENT) {
      event['user'] = userOf(details.target) ?? rowUser ?? { ...UNKNOWN_USER };
      if (cls === GROUP_MANAGEMENT) event['group'] = { name: details.group! };
    } else if (cls === API_ACTIVITY) {
      event['api'] = { operation: action ?? 'Unknown', service: { name: OCSF_PRODUCT.name } };
      event['src_endpoint'] = srcEndpoint ?? { ...UNKNOWN_ENDPOINT };
      const ua = cell(this.userAgent);
      if (ua !== undefined) {
        event['http_request'] = { user_agent: ua };
        placed.add(this.userAgent);
      }
    }

    const unmapped: JsonObject = Object.create(null) as JsonObject;
    let hasUnmapped = false;
    let raw = '';
    for (let i = 0; i < this.columns.length; i++) {
      const v = values[i] ?? '';
      raw += this.rawMembers[i] + JSON.stringify(v);
      if (placed.has(i)) continue;
      unmapped[this.columns[i]!] = v;
      hasUnmapped = true;
    }
    if (hasUnmapped) event['unmapped'] = unmapped;
    event['raw_data'] = `{${raw}}`;
    return JSON.stringify(event);
  }
}
