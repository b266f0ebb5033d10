/**
 * GET /api/v1/audit-logs/export: control-plane auth (Bearer only, AuditLogManage, feature on
 * the plan), window and filters from the query, and a CSV body streamed in ~64 KiB chunks
 * that the writer sends with backpressure, so millions of rows never sit in memory.
 */
import type { SimAuditLog } from './audit.ts';
import { WindowError } from './audit-window.ts';
import { authenticatePlatform } from './auth.ts';
import type { JsonResponse, SimRequest, StreamResponse } from './http-io.ts';
import { dropRange } from './faults.ts';
import type { FaultRule, SimulatorToken } from './types.ts';

export const AUDIT_EXPORT_PATH = '/api/v1/audit-logs/export';
const CHUNK_BYTES = 64 * 1024;

export function platformError(status: number, message: string, headers: Record<string, string> = {}): JsonResponse {
  return { status, headers: { 'content-type': 'application/json; charset=utf-8', ...headers }, json: { error: message } };
}

function filenamePart(raw: string | null, fallbackMs: number): string {
  if (raw) return raw.replace(/[^0-9A-Za-z.+-]/g, '-');
  return Number.isFinite(fallbackMs) ? new Date(fallbackMs).toISOString().slice(0, 10) : 'all';
}

/**
 * Rows are encoded straight into 64 KiB Buffers: accumulating them in a JS string keeps row
 * strings alive across young-generation GCs, and V8 then grows the old space with every
 * million rows exported. Off-heap chunks keep the heap flat whatever the export size.
 */
function* csvChunks(log: SimAuditLog, rows: Iterable<{ values: string[] }>): IterableIterator<Buffer> {
  const layout = log.layout;
  let chunk = Buffer.allocUnsafe(CHUNK_BYTES);
  let len = chunk.write((log.options().bom ? '\uFEFF' : '') + layout.headerLine());
  for (const row of rows) {
    const line = layout.line(row.values);
    const worst = line.length * 3; // UTF-8 bytes per UTF-16 unit, at most
    if (len + worst > chunk.length) {
      if (len > 0) yield chunk.subarray(0, len);
      chunk = Buffer.allocUnsafe(Math.max(CHUNK_BYTES, worst));
      len = 0;
    }
    len += chunk.write(line, len);
  }
  if (len > 0) yield chunk.subarray(0, len);
}

/** Rows minus those a 'drop-events' fault removes from this export. */
function* withoutDropped<T extends { event: { timestampMs: number } }>(
  rows: Iterable<T>,
  drops: readonly FaultRule[],
): IterableIterator<T> {
  const ranges = drops.map(dropRange);
  for (const row of rows) {
    const ts = row.event.timestampMs;
    if (!ranges.some((r) => ts >= r.fromMs && ts < r.toMs)) yield row;
  }
}

export function handleAuditExport(
  req: SimRequest,
  log: SimAuditLog,
  tokens: ReadonlyMap<string, SimulatorToken>,
  drops: readonly FaultRule[] = [],
): JsonResponse | StreamResponse {
  const auth = authenticatePlatform(req.headers.authorization, tokens, 'AuditLogManage');
  if (!auth.ok) return platformError(auth.status, auth.message);
  if (!log.featureEnabled) return platformError(403, 'Audit log feature is not enabled on this plan');
  if (req.method !== 'GET') return platformError(405, `${req.method} is not allowed on ${AUDIT_EXPORT_PATH}`, { allow: 'GET' });
  const q = req.query;
  let window;
  try {
    window = log.window(q.get('start'), q.get('end'));
  } catch (e) {
    if (e instanceof WindowError) return platformError(400, e.message);
    throw e;
  }
  const filters = {
    ...(q.get('search') ? { search: q.get('search') as string } : {}),
    ...(q.get('eventName') ? { eventName: q.get('eventName') as string } : {}),
    ...(q.get('userEmail') ? { userEmail: q.get('userEmail') as string } : {}),
  };
  const name = `audit-logs-${filenamePart(q.get('start'), window.fromMs)}-${filenamePart(q.get('end'), window.toMs)}.csv`;
  return {
    status: 200,
    headers: {
      'content-type': 'text/csv; charset=utf-8',
      'content-disposition': `attachment; filename="${name}"`,
      'cache-control': 'no-store',
    },
    stream: csvChunks(log, withoutDropped(log.rows(window, filters, 'as-needed'), drops)),
  };
}
