/**
 * Per-item verdicts of a `_bulk` answer. 201/200 delivered; 409 version conflict means the
 * `_id` is already there (a replay): delivered; 429 and 5xx items are retried alone; any
 * other item error is a permanent rejection coded `es_<error.type>`.
 */

export type ItemVerdict =
  | { kind: 'delivered' }
  | { kind: 'retry'; status: number; type: string }
  | { kind: 'rejected'; code: string; reason: string };

interface BulkItem {
  status?: unknown;
  error?: { type?: unknown; reason?: unknown; caused_by?: { type?: unknown; reason?: unknown } } | unknown;
}

/** Undefined when the body is not a bulk answer for `expected` items (then the request is retried). */
export function parseBulkResponse(text: string, expected: number): ItemVerdict[] | undefined {
  let parsed: { items?: unknown };
  try {
    parsed = JSON.parse(text) as { items?: unknown };
  } catch {
    return undefined;
  }
  if (!Array.isArray(parsed.items) || parsed.items.length !== expected) return undefined;
  return parsed.items.map((wrapper: unknown) => {
    const item = (wrapper && typeof wrapper === 'object' ? Object.values(wrapper)[0] : undefined) as BulkItem | undefined;
    return verdict(item);
  });
}

function verdict(item: BulkItem | undefined): ItemVerdict {
  const status = typeof item?.status === 'number' ? item.status : 0;
  const error = (item?.error && typeof item.error === 'object' ? item.error : undefined) as
    | { type?: unknown; reason?: unknown; caused_by?: { type?: unknown; reason?: unknown } }
    | undefined;
  const type = typeof error?.type === 'string' ? error.type : `http_${status}`;
  if (status >= 200 && status < 300) return { kind: 'delivered' };
  if (status === 409 && type === 'version_conflict_engine_exception') return { kind: 'delivered' };
  if (status === 429 || (status >= 500 && status !== 501) || status === 0) return { kind: 'retry', status, type };
  const reason = typeof error?.reason === 'string' ? error.reason : `item status ${status}`;
  const cause = typeof error?.caused_by?.reason === 'string' ? ` (caused by: ${error.caused_by.reason})` : '';
  return { kind: 'rejected', code: `es_${type}`, reason: `${status} ${type}: ${reason}${cause}` };
}
