/**
 * Shapes of the Google Directory API simulator: the workspace it serves (users, groups,
 * members, as the Admin SDK Directory API v1 returns them), the service accounts its
 * token endpoint trusts, and fault rules.
 */

export interface GoogleUserName {
  givenName?: string;
  familyName?: string;
  fullName?: string;
}

/** A Directory API `User` resource (the fields this simulator keeps). */
export interface GoogleUser {
  kind: 'admin#directory#user';
  id: string;
  etag: string;
  primaryEmail: string;
  name: GoogleUserName;
  isAdmin: boolean;
  isDelegatedAdmin: boolean;
  suspended: boolean;
  suspensionReason?: string;
  archived: boolean;
  orgUnitPath: string;
  creationTime: string;
  customerId: string;
  aliases?: string[];
  nonEditableAliases?: string[];
  emails?: Array<{ address: string; primary?: boolean; type?: string }>;
  externalIds?: Array<{ value: string; type: string; customType?: string }>;
  organizations?: Array<{ title?: string; department?: string; costCenter?: string; primary?: boolean }>;
  /** Custom schema fields by schema name; returned only with `projection=full` or `custom`. */
  customSchemas?: Record<string, Record<string, unknown>>;
}

export interface GoogleGroup {
  kind: 'admin#directory#group';
  id: string;
  etag: string;
  email: string;
  name: string;
  description: string;
  directMembersCount: string;
  adminCreated: boolean;
  aliases?: string[];
}

export type MemberType = 'USER' | 'GROUP' | 'CUSTOMER';

export interface GoogleMember {
  kind: 'admin#directory#member';
  etag: string;
  id: string;
  /** Absent for CUSTOMER members. */
  email?: string;
  role: 'OWNER' | 'MANAGER' | 'MEMBER';
  type: MemberType;
  status: 'ACTIVE' | 'SUSPENDED' | 'ARCHIVED' | 'UNDEFINED';
  delivery_settings?: string;
}

/** A service account the token endpoint trusts, with its domain-wide delegation grant. */
export interface SimServiceAccount {
  clientEmail: string;
  /** The numeric OAuth client id that the Admin console's delegation screen asks for. */
  clientId: string;
  /** PEM SPKI public key of the account's key pair; assertions must verify against it. */
  publicKeyPem: string;
  /** Scopes granted by domain-wide delegation; undefined = delegation not granted. */
  delegatedScopes?: string[];
}

/** Which request a fault applies to. */
export type GoogleRoute = 'token' | 'users' | 'user' | 'groups' | 'group' | 'members' | 'activities';

export type GoogleFaultKind =
  /** 429 RESOURCE_EXHAUSTED, reason rateLimitExceeded. */
  | 'rate-limit-429'
  /** 403 PERMISSION_DENIED, reason userRateLimitExceeded (Google's per-user quota). */
  | 'user-rate-limit-403'
  /** 403 PERMISSION_DENIED, reason rateLimitExceeded. */
  | 'rate-limit-403'
  /** 500 backendError. */
  | 'backend-error'
  /** 503 UNAVAILABLE. */
  | 'unavailable'
  /** A complete HTTP 200 whose JSON body is cut in half. */
  | 'truncate'
  /** The socket is destroyed before any response. */
  | 'reset';

export interface GoogleFaultRule {
  kind: GoogleFaultKind;
  /** Default: every route. */
  route?: GoogleRoute;
  /** 1-based page of a list call (offset / page size + 1); default any page. */
  page?: number;
  /** Only for members: the group email or id. */
  groupKey?: string;
  /** Fire at most N times (default: always). */
  times?: number;
  /** Skip the first N matching requests. */
  after?: number;
  /** Fire on every Nth matching request only. */
  every?: number;
  /** Retry-After seconds sent with rate limits and 503s. */
  retryAfterSeconds?: number;
}

export interface GoogleRequestLogEntry {
  method: string;
  path: string;
  query: Record<string, string>;
  status: number;
  route: GoogleRoute | 'other';
  fault?: GoogleFaultKind;
  /** The subject (impersonated admin) of the access token used, if any. */
  subject?: string;
}

export interface GoogleSimulatorOptions {
  host?: string;
  port?: number;
  /** The workspace's primary domain (default example.com). */
  domain?: string;
  /** The workspace's customer id (default C0sim1234). */
  customerId?: string;
  serviceAccounts?: SimServiceAccount[];
  /** false: every Directory API call answers 403 accessNotConfigured / SERVICE_DISABLED. */
  apiEnabled?: boolean;
  faults?: GoogleFaultRule[];
  /** Keep a request log in memory (default true). */
  recordRequests?: boolean;
  onRequest?: (entry: GoogleRequestLogEntry) => void;
  /** Admin audit events become visible in the Reports API this long after they happen (ms; default 0). */
  reportsLagMs?: number;
}
