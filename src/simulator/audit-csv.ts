/**
 * CSV rendering of audit events: the column set (built-in, renamed, dropped, extra), the
 * timestamp format, and RFC 4180 quoting (fields with commas, quotes or newlines are quoted).
 */
import type { AuditColumnKey, AuditSimOptions, SimAuditEvent, SimAuditEventCore } from './audit-types.ts';

export const DEFAULT_HEADERS: Record<AuditColumnKey, string> = {
  eventId: 'Event ID',
  timestamp: 'Timestamp',
  eventName: 'Event Name',
  userEmail: 'User Email',
  ipAddress: 'IP Address',
  deploymentId: 'Deployment ID',
  userAgent: 'User Agent',
  details: 'Details',
};

interface Column {
  header: string;
  value: (e: SimAuditEventCore) => string;
}

/** Formats event times; caches the per-second prefix because rows arrive in time order. */
export class TimestampFormat {
  private readonly ms: boolean;
  private readonly suffix: string;
  private lastSecond = Number.NaN;
  private lastPrefix = '';

  constructor(opts: AuditSimOptions) {
    this.ms = (opts.timestampPrecision ?? 'ms') === 'ms';
    this.suffix = opts.timestampSuffix ?? 'Z';
  }

  format(ms: number): string {
    const second = Math.floor(ms / 1000);
    if (second !== this.lastSecond) {
      this.lastSecond = second;
      this.lastPrefix = new Date(second * 1000).toISOString().slice(0, 19); // 2026-11-01T10:00:00
    }
    if (!this.ms) return this.lastPrefix + this.suffix;
    const frac = ms - second * 1000;
    return `${this.lastPrefix}.${frac < 10 ? '00' : frac < 100 ? '0' : ''}${frac}${this.suffix}`;
  }
}

const NEEDS_QUOTES = /[",\r\n]/;

export function csvField(s: string): string {
  if (s.length === 0) return s;
  const first = s.charCodeAt(0);
  const last = s.charCodeAt(s.length - 1);
  // Leading/trailing blanks are quoted too, so no parser's trimming can change the value.
  if (NEEDS_QUOTES.test(s) || first === 32 || first === 9 || last === 32 || last === 9) return `"${s.replaceAll('"', '""')}"`;
  return s;
}

export class CsvLayout {
  readonly columns: Column[];
  readonly eol: string;
  /** An id column, or extra columns (whose values may be computed from the id). */
  readonly mayShowIds: boolean;

  constructor(opts: AuditSimOptions) {
    this.eol = opts.crlf ? '\r\n' : (opts.lineEnding ?? '\n');
    this.mayShowIds = opts.idColumn === true || (opts.extraColumns ?? []).length > 0;
    const keys: AuditColumnKey[] = [
      ...(opts.idColumn ? (['eventId'] as const) : []),
      'timestamp',
      'eventName',
      'userEmail',
      'ipAddress',
      'deploymentId',
      ...(opts.userAgentColumn ? (['userAgent'] as const) : []),
      'details',
    ];
    const ts = new TimestampFormat(opts);
    const builtIn: Column[] = keys.map((k) => ({
      header: opts.headers?.[k] ?? DEFAULT_HEADERS[k],
      value: k === 'timestamp' ? (e) => ts.format(e.timestampMs) : k === 'eventId' ? (e) => e.id : (e) => e[k],
    }));
    const extra: Column[] = (opts.extraColumns ?? []).map((c) => ({
      header: c.header,
      value: typeof c.value === 'function' ? c.value : () => (c.value as string | undefined) ?? '',
    }));
    const drop = new Set(opts.dropColumns ?? []);
    this.columns = [...builtIn, ...extra].filter((c) => !drop.has(c.header));
  }

  headerLine(): string {
    return this.columns.map((c) => csvField(c.header)).join(',') + this.eol;
  }

  values(e: SimAuditEventCore): string[] {
    return this.columns.map((c) => c.value(e));
  }

  line(values: string[]): string {
    let out = csvField(values[0] ?? '');
    for (let i = 1; i < values.length; i++) out += ',' + csvField(values[i] as string);
    return out + this.eol;
  }

  withFields(e: SimAuditEventCore, values = this.values(e)): SimAuditEvent {
    const fields: Record<string, string> = {};
    this.columns.forEach((c, i) => (fields[c.header] = values[i] ?? ''));
    return { ...e, fields };
  }
}
