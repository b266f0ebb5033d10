/** Public shapes of the simulated audit-log export (GET /api/v1/audit-logs/export). */

/** Built-in columns; their default headers are in DEFAULT_HEADERS (audit-columns.ts). */
export type AuditColumnKey = 'eventId' | 'timestamp' | 'eventName' | 'userEmail' | 'ipAddress' | 'deploymentId' | 'details' | 'userAgent';

export interface AuditExtraColumn {
  header: string;
  /** A constant, or a function of the event; default empty. */
  value?: string | ((e: SimAuditEventCore) => string);
}

export interface AuditSimOptions {
  /** Time of generated event 0 (ISO 8601). Default '2026-11-01T00:00:00Z'. */
  startAt?: string;
  /** No generated events at or after this time (ISO 8601). Default: unbounded. */
  endAt?: string;
  /** Default 60. Event i falls at a seeded point of slot [i, i+1) × (1h / eventsPerHour). */
  eventsPerHour?: number;
  /** Add an `Event ID` column first. Default false (the platform's ids are not known to exist). */
  idColumn?: boolean;
  /** Rename built-in headers (schema drift), e.g. { eventName: 'Event' }. */
  headers?: Partial<Record<AuditColumnKey, string>>;
  /** Headers to leave out, e.g. ['IP Address']. */
  dropColumns?: string[];
  /** Extra columns appended after the built-in ones. */
  extraColumns?: AuditExtraColumn[];
  /** Add a `User Agent` column before Details. Default false. */
  userAgentColumn?: boolean;
  /** Prefix the body with a UTF-8 BOM. Default false. */
  bom?: boolean;
  /** Default '\n'. */
  lineEnding?: '\n' | '\r\n';
  /** Shorthand for lineEnding '\r\n'. */
  crlf?: boolean;
  /** 's' truncates event times to whole seconds (several events then share a timestamp). Default 'ms'. */
  timestampPrecision?: 's' | 'ms';
  /** Default 'Z'. */
  timestampSuffix?: 'Z' | '+00:00';
  /** Default 'asc'. */
  order?: 'asc' | 'desc';
  /** Treat a datetime `end` as inclusive. Default false (exclusive). A date-only end always covers that whole day. */
  endInclusive?: boolean;
  /** Share of rows whose Details JSON is pretty-printed, i.e. contains real newlines. Default 0.05. */
  multilineDetailsRate?: number;
  /** Silently stop after this many rows per export (a platform that caps exports). Default unlimited. */
  maxRows?: number;
  /** Clock for an export without `end` (events up to now). Default Date.now. */
  clock?: () => number;
}

/** The generated content of one event, before columns are applied. */
export interface SimAuditEventCore {
  /** Generator index; late events count down from -1. */
  index: number;
  id: string;
  /** Canonical event time (already truncated to the configured precision), epoch ms. */
  timestampMs: number;
  eventName: string;
  userEmail: string;
  ipAddress: string;
  deploymentId: string;
  userAgent: string;
  /** JSON text. */
  details: string;
  late: boolean;
}

export interface SimAuditEvent extends SimAuditEventCore {
  /** header → value exactly as the CSV row renders it with the current options. */
  fields: Record<string, string>;
}

export interface LateEventInput {
  timestamp: string | number | Date;
  eventName?: string;
  userEmail?: string;
  ipAddress?: string;
  deploymentId?: string;
  userAgent?: string;
  details?: string | Record<string, unknown>;
  id?: string;
}

export interface AuditFilters {
  /** Case-insensitive substring over every field of the row. */
  search?: string;
  /** Case-insensitive equality. */
  eventName?: string;
  /** Case-insensitive equality. */
  userEmail?: string;
}

export interface SimAudit {
  /** Adds an event (typically in a window that was already exported). */
  insertLateEvent(e: LateEventInput): SimAuditEvent;
  /** Changes columns / ordering / format at runtime; unspecified keys keep their value. */
  setOptions(partial: Partial<AuditSimOptions>): void;
  setFeatureEnabled(enabled: boolean): void;
  /** Events the export would return for these query values (same window rules as HTTP). */
  countEvents(start?: string, end?: string, filters?: AuditFilters): number;
  eventsIn(start?: string, end?: string, filters?: AuditFilters): IterableIterator<SimAuditEvent>;
  /** The header row with the current options. */
  header(): string[];
}
