/**
 * How the reader's failures are classified (once, here): all transient, the window is
 * retried. Codes: docs/audit.md#what-the-export-must-be.
 */
import { ErrorCodes, SyncError, errorCodeOf, isSyncError } from '../../errors.ts';

const TIMEOUT_CODES = new Set(['UND_ERR_BODY_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'ETIMEDOUT']);

/** The body failed while it was read: a stall between chunks, or a transfer cut short. */
export function streamError(e: unknown): SyncError {
  if (isSyncError(e)) return e;
  const c = errorCodeOf(e) ?? 'unknown';
  if (TIMEOUT_CODES.has(c)) {
    return new SyncError(ErrorCodes.TIMEOUT, 'transient', `audit-log export stream stalled (${c})`, { cause: e });
  }
  // A chunked body without its terminator, a body short of its Content-Length, a reset socket.
  return new SyncError(ErrorCodes.EXPORT_TRUNCATED, 'transient', `audit-log export stream interrupted (${c}): the body is incomplete`, {
    cause: e,
  });
}

/** csv-parse refused the body itself (not one row): the window is retried. */
export function parseFailure(code: string, message: string): SyncError {
  return new SyncError(ErrorCodes.TRANSIENT, 'transient', `audit-log export could not be parsed (${code}: ${message})`);
}

/** The body ended inside a record: its last row is cut (no line break, cells or a quote missing). */
export function truncatedAtEnd(line: number, reason: string): SyncError {
  return new SyncError(
    ErrorCodes.EXPORT_TRUNCATED,
    'transient',
    `audit-log export ended inside a record (line ${line}: ${reason}): the body is incomplete`,
  );
}

export function recordTooLarge(maxRecordBytes: number, line: number): SyncError {
  return new SyncError(
    ErrorCodes.RECORD_TOO_LARGE,
    'transient',
    `audit-log export: the record starting on line ${line} is larger than ${maxRecordBytes} bytes (audit.limits.maxRecordBytes)`,
  );
}

export function bodyTooLarge(maxBytes: number): SyncError {
  return new SyncError(
    ErrorCodes.RESPONSE_TOO_LARGE,
    'transient',
    `audit-log export: one window's body is larger than ${maxBytes} bytes (audit.limits.maxWindowMegabytes)`,
  );
}

export function notCsvBody(kind: 'html' | 'json'): SyncError {
  return new SyncError(
    ErrorCodes.EXPORT_NOT_CSV,
    'transient',
    kind === 'html'
      ? 'audit-log export: expected a CSV attachment, got an HTML page; check platform.baseUrl (a proxy or login page answered)'
      : 'audit-log export: expected a CSV attachment, got a JSON body',
  );
}

export function noHeader(emptyBody: boolean): SyncError {
  return emptyBody
    ? new SyncError(ErrorCodes.EXPORT_EMPTY, 'transient', 'audit-log export: the body is empty (not even a header row): not an export')
    : new SyncError(ErrorCodes.EXPORT_NO_HEADER, 'transient', 'audit-log export: the body has no header row: not an export');
}
