/** Shapes shared by the Entra ID simulator's modules. */

export interface JsonReply {
  status: number;
  json: unknown;
  headers?: Record<string, string>;
}

/** An app registration with its credentials and the Graph application permissions it holds. */
export interface SimApp {
  clientId: string;
  displayName?: string;
  secrets?: Array<{ value: string; expiresAt?: number }>;
  /** PEM certificates uploaded to the app (their SHA-1/SHA-256 thumbprints identify the signer). */
  certificates?: string[];
  /** Federated identity credentials (workload identity): the issuer's key verifies the assertion. */
  federated?: Array<{ issuer: string; subject: string; audience?: string; publicKeyPem: string }>;
  /** Application permissions requested in the app registration, e.g. `User.Read.All`. */
  permissions?: string[];
  /** Admin consent granted: only then do the permissions appear in the token's `roles`. */
  adminConsent?: boolean;
}

export type EntraRoute =
  | 'metadata'
  | 'token'
  | 'users'
  | 'users-delta'
  | 'groups'
  | 'groups-delta'
  | 'group'
  | 'members'
  | 'transitive-members'
  | 'other';

export type EntraFaultKind = 'throttle-429' | 'unavailable-503' | 'server-error-500' | 'truncate' | 'reset' | 'delta-expired-410';

export interface EntraFaultRule {
  kind: EntraFaultKind;
  route?: EntraRoute;
  /** 1-based page number of a paged listing. */
  page?: number;
  /** Fire this many times (default: always). */
  times?: number;
  /** Every Nth matching request. */
  every?: number;
  retryAfterSeconds?: number;
}

export interface EntraRequestLogEntry {
  method: string;
  path: string;
  query: Record<string, string>;
  route: EntraRoute;
  status: number;
  page?: number;
  fault?: EntraFaultKind;
  consistencyLevel?: string;
}

export interface EntraSimulatorOptions {
  tenantId?: string;
  domain?: string;
  apps?: SimApp[];
  faults?: EntraFaultRule[];
  host?: string;
  port?: number;
  /** TLS key and certificate (PEM): MSAL refuses an http:// authority. */
  tls: { key: string; cert: string };
  recordRequests?: boolean;
  onRequest?: (e: EntraRequestLogEntry) => void;
}
