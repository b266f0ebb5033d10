/**
 * The OCSF classes audit events are mapped to, and which event name goes to which class and
 * activity (kept as data: the platform's set of event names is not documented, so names are
 * matched by pattern, first rule wins). Numbers and names follow OCSF 1.3.0.
 */

/** The OCSF schema version the documents follow (`metadata.version`). */
export const OCSF_VERSION = '1.3.0';

export interface OcsfClass {
  uid: number;
  name: string;
  categoryUid: number;
  categoryName: string;
  /** activity_id → activity_name (0 Unknown and 99 Other exist in every class). */
  activities: Readonly<Record<number, string>>;
}

const IAM = { categoryUid: 3, categoryName: 'Identity & Access Management' } as const;

export const ACCOUNT_CHANGE: OcsfClass = {
  uid: 3001,
  name: 'Account Change',
  ...IAM,
  activities: {
    0: 'Unknown',
    1: 'Create',
    2: 'Enable',
    3: 'Password Change',
    4: 'Password Reset',
    5: 'Disable',
    6: 'Delete',
    7: 'Attach Policy',
    8: 'Detach Policy',
    9: 'Lock',
    10: 'MFA Factor Enable',
    11: 'MFA Factor Disable',
    12: 'Unlock',
    99: 'Other',
  },
};

export const AUTHENTICATION: OcsfClass = {
  uid: 3002,
  name: 'Authentication',
  ...IAM,
  activities: {
    0: 'Unknown',
    1: 'Logon',
    2: 'Logoff',
    3: 'Authentication Ticket',
    4: 'Service Ticket Request',
    5: 'Service Ticket Renew',
    6: 'Preauth',
    99: 'Other',
  },
};

export const GROUP_MANAGEMENT: OcsfClass = {
  uid: 3006,
  name: 'Group Management',
  ...IAM,
  activities: {
    0: 'Unknown',
    1: 'Assign Privileges',
    2: 'Revoke Privileges',
    3: 'Add User',
    4: 'Remove User',
    5: 'Delete',
    6: 'Create',
    99: 'Other',
  },
};

export const API_ACTIVITY: OcsfClass = {
  uid: 6003,
  name: 'API Activity',
  categoryUid: 6,
  categoryName: 'Application Activity',
  activities: { 0: 'Unknown', 1: 'Create', 2: 'Read', 3: 'Update', 4: 'Delete', 99: 'Other' },
};

/** OCSF status_id. */
export const STATUS = { unknown: 0, success: 1, failure: 2 } as const;
export const STATUS_NAMES: Readonly<Record<number, string>> = { 0: 'Unknown', 1: 'Success', 2: 'Failure' };

export interface ClassRule {
  /** Matched against the event name (the action column). */
  pattern: RegExp;
  cls: OcsfClass;
  activityId: number;
  /** The activity's name where the class has no caption for it (`99 Other`). */
  activityName?: string;
  /** What the name states about the outcome (a name in the past tense states success). */
  status: (typeof STATUS)[keyof typeof STATUS];
}

const rule = (pattern: RegExp, cls: OcsfClass, activityId: number, status: ClassRule['status'] = STATUS.success): ClassRule => ({
  pattern,
  cls,
  activityId,
  status,
});

/**
 * Event name → class and activity, first match wins. The simulator's names (the known ones) are
 * covered by the first rules; the verb rules after them catch the platform's other names. A name
 * no rule matches (or a row without an event name) is an API Activity `Other` (FALLBACK).
 */
export const CLASS_RULES: readonly ClassRule[] = [
  rule(
    /\b(failed|failure|denied|rejected|invalid)\b.*\b(log ?in|logon|sign[- ]?in|auth\w*)\b|\b(log ?in|logon|sign[- ]?in)\b.*\b(failed|failure|denied)\b/i,
    AUTHENTICATION,
    1,
    STATUS.failure,
  ),
  rule(/\b(logged|signed) ?(out|off)\b|\b(log|sign)[- ]?(out|off)\b/i, AUTHENTICATION, 2),
  rule(/\b(logged|signed) ?in\b|\b(log|sign)[- ]?in\b|\blogon\b|\bauthenticated\b/i, AUTHENTICATION, 1),
  rule(/\b(added|assigned)\b.*\buser\b.*\bgroup\b|\bgroup member(ship)? added\b/i, GROUP_MANAGEMENT, 3),
  rule(/\b(removed|unassigned)\b.*\buser\b.*\bgroup\b|\bgroup member(ship)? removed\b/i, GROUP_MANAGEMENT, 4),
  rule(/\b(reset)\b.*\bpassword\b|\bpassword reset\b/i, ACCOUNT_CHANGE, 4),
  rule(/\b(changed|updated)\b.*\bpassword\b|\bpassword changed?\b/i, ACCOUNT_CHANGE, 3),
  rule(/\b(assigned|granted|added)\b.*\brole\b/i, ACCOUNT_CHANGE, 7),
  rule(/\b(revoked|removed|unassigned)\b.*\brole\b/i, ACCOUNT_CHANGE, 8),
  rule(/\b(created|added|provisioned|invited)\b.*\b(user|account)\b/i, ACCOUNT_CHANGE, 1),
  rule(/\b(deactivated|disabled|suspended)\b.*\b(user|account)\b/i, ACCOUNT_CHANGE, 5),
  rule(/\b(activated|reactivated|enabled)\b.*\b(user|account)\b/i, ACCOUNT_CHANGE, 2),
  rule(/\b(deleted|removed|deprovisioned)\b.*\b(user|account)\b/i, ACCOUNT_CHANGE, 6),
  // OCSF 1.3.0's Account Change has no Unlock activity (1.4.0 adds it as 12).
  { ...rule(/\b(unlocked)\b.*\b(user|account)\b/i, ACCOUNT_CHANGE, 99), activityName: 'Unlock' },
  rule(/\b(locked)\b.*\b(user|account)\b/i, ACCOUNT_CHANGE, 9),
  rule(/\b(updated|changed|modified|edited)\b.*\b(user|account)\b/i, ACCOUNT_CHANGE, 99),
  rule(/^\s*(created|added|generated|issued|uploaded|published|shared)\b/i, API_ACTIVITY, 1),
  rule(/^\s*(viewed|exported|read|downloaded|listed|opened|queried|accessed)\b/i, API_ACTIVITY, 2),
  rule(/^\s*(updated|changed|modified|edited|renamed|moved|enabled|disabled|switched)\b/i, API_ACTIVITY, 3),
  rule(/^\s*(deleted|removed|revoked|archived)\b/i, API_ACTIVITY, 4),
];

/**
 * OCSF 1.3.0's `email_t` (its dictionary's regex): an address outside it (an IDN, a Unicode
 * local part) is a user's `name` only.
 */
// The published pattern, character for character (`+-/` is a range: `+`, `,`, `-`, `.`, `/`).
export const OCSF_EMAIL = /^[a-zA-Z0-9!#$%&'*+-/=?^_`{|}~.]+@[a-zA-Z0-9-]+\.[a-zA-Z0-9-.]+$/;

/**
 * Stand-ins for a user, group or endpoint the row does not name: OCSF requires at least one
 * of `name`/`uid` (and `ip` … for endpoints) on each, so the name says it is not known.
 */
export const UNKNOWN_USER = { name: 'Unknown', type_id: 0, type: 'Unknown' } as const;
export const UNKNOWN_GROUP = { name: 'Unknown' } as const;
export const UNKNOWN_ENDPOINT = { name: 'Unknown' } as const;

/**
 * The profiles an event of a class applies (`metadata.profiles`): in OCSF 1.3.0 Group
 * Management has `actor` only through the Host profile.
 */
export function profilesOf(cls: OcsfClass): string[] | undefined {
  return cls === GROUP_MANAGEMENT ? ['host'] : undefined;
}

/** The class of an event no rule matches. */
export const FALLBACK: ClassRule = { pattern: /$^/, cls: API_ACTIVITY, activityId: 99, status: STATUS.unknown };

export function classifyEventName(name: string | undefined): ClassRule {
  if (name) for (const r of CLASS_RULES) if (r.pattern.test(name)) return r;
  return FALLBACK;
}

/** OCSF severity_id by the names a platform's severity column may hold. */
export const SEVERITY_IDS: Readonly<Record<string, number>> = {
  unknown: 0,
  informational: 1,
  info: 1,
  information: 1,
  low: 2,
  medium: 3,
  moderate: 3,
  warning: 3,
  warn: 3,
  high: 4,
  error: 4,
  critical: 5,
  fatal: 6,
};

export const SEVERITY_NAMES: Readonly<Record<number, string>> = {
  0: 'Unknown',
  1: 'Informational',
  2: 'Low',
  3: 'Medium',
  4: 'High',
  5: 'Critical',
  6: 'Fatal',
  99: 'Other',
};
