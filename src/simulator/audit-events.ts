/**
 * Deterministic, lazily generated audit events. Event i is a pure function of (seed, i):
 * its time lies at a seeded point inside slot i (so times never decrease with i) and its
 * content comes from a PRNG seeded by (seed, i). A window is therefore an index range found
 * by binary search, and rows are produced on the fly: no arrays, whatever the window size.
 */
import type { SimAuditEventCore } from './audit-types.ts';
import { emailLocal, FAMILY_NAMES, GIVEN_NAMES } from './names.ts';
import { mix, mulberry32, pick, uuidFromWords } from './prng.ts';

export interface GeneratorSettings {
  seed: number;
  startMs: number;
  /** Exclusive; Infinity when unbounded. */
  endMs: number;
  eventsPerHour: number;
  precision: 's' | 'ms';
  multilineDetailsRate: number;
}

/** [event name, relative weight]: logins dominate, as in real audit logs. */
const EVENT_NAMES: ReadonlyArray<readonly [string, number]> = [
  ['Logged in', 30],
  ['Logged out', 18],
  ['Failed login attempt', 4],
  ['Created user via SCIM', 6],
  ['Updated user via SCIM', 8],
  ['Deactivated user via SCIM', 2],
  ['Added user to group via SCIM', 5],
  ['Assigned role to user', 4],
  ['Exported data', 6],
  ['Changed tenant settings', 2],
  ['Created API key', 1],
  ['Revoked API key', 1],
  ['Viewed dashboard', 10],
  ['Updated data model', 3],
];
const TOTAL_WEIGHT = EVENT_NAMES.reduce((n, [, w]) => n + w, 0);

const USER_AGENTS = [
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36',
  'Okta SCIM Client 1.0',
  'Azure AD SCIM Provisioning',
  'python-requests/2.32.3',
];
const ROLES = ['Viewer', 'Editor', 'Admin', 'Data Engineer', 'Owner'];
const USER_POOL = 400;
const DEPLOYMENT_POOL = 8;

function weightedEventName(rnd: () => number): string {
  let r = rnd() * TOTAL_WEIGHT;
  for (const [name, w] of EVENT_NAMES) if ((r -= w) < 0) return name;
  return EVENT_NAMES[0]![0];
}

function ipAddress(rnd: () => number): string {
  const b = (): number => Math.floor(rnd() * 256);
  if (rnd() < 0.2) return `2001:db8:${Math.floor(rnd() * 65536).toString(16)}::${Math.floor(rnd() * 65536).toString(16)}`;
  return `${1 + Math.floor(rnd() * 222)}.${b()}.${b()}.${b()}`;
}

function details(rnd: () => number, name: string, user: string, pool: readonly string[]): Record<string, unknown> {
  const other = pick(rnd, pool);
  switch (name) {
    case 'Logged in':
    case 'Failed login attempt':
      return {
        method: pick(rnd, ['password', 'sso', 'saml', 'oidc']),
        mfa: rnd() < 0.7,
        reason: name === 'Logged in' ? null : 'invalid credentials, "locked" after 5 tries',
      };
    case 'Created user via SCIM':
    case 'Updated user via SCIM':
    case 'Deactivated user via SCIM':
      return { target: other, changes: { title: ['Analyst', 'Lead, Data'], active: name !== 'Deactivated user via SCIM' }, via: 'scim' };
    case 'Added user to group via SCIM':
      return { target: other, group: `${pick(rnd, ['Sales', 'Data', 'Ops'])}, EMEA` };
    case 'Logged out':
      return { sessionMinutes: Math.floor(rnd() * 480), reason: pick(rnd, ['user', 'timeout', 'admin, forced']) };
    case 'Assigned role to user':
      return { target: other, role: pick(rnd, ROLES), previous: pick(rnd, ROLES) };
    case 'Exported data':
      return {
        report: `Revenue by "region", ${2020 + Math.floor(rnd() * 7)}`,
        rows: Math.floor(rnd() * 100000),
        format: pick(rnd, ['csv', 'xlsx']),
      };
    case 'Changed tenant settings':
      return { setting: pick(rnd, ['auditLog', 'supportAccess', 'maintenanceWindow']), from: 'off', to: 'on', note: `changed by ${user}` };
    default:
      return { resource: `item-${Math.floor(rnd() * 1000)}`, comment: 'ok, done' };
  }
}

export class AuditGenerator {
  readonly settings: GeneratorSettings;
  private readonly intervalMs: number;
  private readonly users: string[];
  private readonly deployments: string[];

  constructor(settings: GeneratorSettings) {
    this.settings = settings;
    this.intervalMs = 3_600_000 / Math.max(1e-9, settings.eventsPerHour);
    const rnd = mulberry32(mix(settings.seed, 0xa0d17));
    this.users = Array.from(
      { length: USER_POOL },
      (_, n) => `${emailLocal(pick(rnd, GIVEN_NAMES), pick(rnd, FAMILY_NAMES))}${n + 1}@example.com`,
    );
    this.deployments = Array.from({ length: DEPLOYMENT_POOL }, () => String(1000 + Math.floor(rnd() * 9000)));
  }

  /** Canonical time of event i (non-decreasing in i). */
  timeOf(i: number): number {
    const u = mix(this.settings.seed ^ 0x7157, i) / 4294967296;
    const ms = this.settings.startMs + Math.floor((i + 0.98 * u) * this.intervalMs);
    return this.settings.precision === 's' ? ms - (((ms % 1000) + 1000) % 1000) : ms;
  }

  /** Smallest i with timeOf(i) >= ms, bounded by the generator's end. */
  firstIndexAtOrAfter(ms: number): number {
    const endIndex = Number.isFinite(this.settings.endMs) ? this.searchTime(this.settings.endMs) : Infinity;
    return Math.min(this.searchTime(ms), endIndex);
  }

  private searchTime(ms: number): number {
    if (ms <= this.settings.startMs) return 0;
    let lo = 0;
    let hi = Math.ceil((ms - this.settings.startMs) / this.intervalMs) + 2;
    while (lo < hi) {
      const mid = Math.floor((lo + hi) / 2);
      if (this.timeOf(mid) >= ms) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  /** Stable per (seed, i); derived without the content PRNG so it costs four hashes. */
  idOf(i: number): string {
    const s = this.settings.seed;
    return uuidFromWords(mix(s ^ 0x1d01, i), mix(s ^ 0x1d02, i), mix(s ^ 0x1d03, i), mix(s ^ 0x1d04, i));
  }

  /** Event i; `withId: false` leaves `id` empty (an export without an id column need not pay for it). */
  eventAt(i: number, withId = true): SimAuditEventCore {
    const rnd = mulberry32(mix(this.settings.seed ^ 0xe7e47, i));
    const eventName = weightedEventName(rnd);
    const userEmail = pick(rnd, this.users);
    const obj = details(rnd, eventName, userEmail, this.users);
    const multiline = rnd() < this.settings.multilineDetailsRate;
    return {
      index: i,
      id: withId ? this.idOf(i) : '',
      timestampMs: this.timeOf(i),
      eventName,
      userEmail,
      ipAddress: ipAddress(rnd),
      deploymentId: pick(rnd, this.deployments),
      userAgent: pick(rnd, USER_AGENTS),
      details: multiline ? JSON.stringify(obj, null, 2) : JSON.stringify(obj),
      late: false,
    };
  }
}
