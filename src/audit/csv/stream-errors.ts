/** How the reader's failures are classified (once, here): all transient, the window is retried. */
import { ErrorCodes, SyncError, errorCodeOf, isSyncError } from '../../errors.ts';

const TIMEOUT_CODES = new Set(['UND_ERR_BODY_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'ETIMEDOUT']);

export function streamError(e: unknown): SyncError {
  if (isSyncError(e)) return e;
  const c = errorCodeOf(e) ?? 'unknown';
  return new SyncError(
    TIMEOUT_CODES.has(c) ? ErrorCodes.TIMEOUT : ErrorCodes.TRANSIENT,
    'transient',
    `audit-log export stream interrupted (${c})`,
    { cause: e },
  );
}

/** csv-parse refused the body itself (not one row): the window is retried. */
export function parseFailure(code: string, message: string): SyncError {
  return new SyncError(ErrorCodes.TRANSIENT, 'transient', `audit-log export could not be parsed (${code}: ${message})`);
}
