/**
 * One window re-exported for `audit verify`: the same request (widened), the same client-side
 * filter to `[startMs, endMs)` and the same keys as the export (identical rows numbered, an id
 * listed twice counted once), but nothing is delivered, deduplicated against the state or
 * committed. Returns the window's digest and, when asked, its keys with their times.
 */
import { ErrorCodes, SyncError, isSyncError } from '../../errors.ts';
import { isFatalExportError, openAuditExport } from '../../platform/audit-export.ts';
import type { PlatformClient } from '../../platform/http-client.ts';
import { backoffDelay, sleep } from '../../platform/retry.ts';
import { EventBuilder } from '../build-event.ts';
import { COLUMN_CANDIDATES, uniqueColumnNames } from '../columns.ts';
import { type AuditConfig, windowRetryPolicy } from '../config-schema.ts';
import { readCsv } from '../csv/read-csv.ts';
import { DigestAccumulator, ZERO_HASH, type WindowDigest } from '../digest/window-digest.ts';
import { PassKeys } from '../event-key.ts';
import { createTimestampParser } from '../timestamp.ts';
import { requestFor, type ExportWindow } from '../windows.ts';

export interface WindowKeys {
  digest: WindowDigest;
  /** key → event time (ms), when `collect` was asked for. */
  keys: Map<string, number> | undefined;
  /** Rows without a usable timestamp (not events: the export dead-letters them). */
  badRows: number;
}

async function readWindow(
  platform: PlatformClient,
  config: AuditConfig,
  w: ExportWindow,
  gridMs: number,
  collect: boolean,
  signal: AbortSignal | undefined,
): Promise<WindowKeys> {
  const request = requestFor(w, config.precision);
  const res = await openAuditExport(platform, { ...request, precision: config.precision, ...config.filters, signal });
  const acc = new DigestAccumulator(gridMs);
  const pass = new PassKeys();
  const keys = collect ? new Map<string, number>() : undefined;
  const parseTimestamp = createTimestampParser(config.timestamp.timezone);
  let builder: EventBuilder | undefined;
  let badRows = 0;
  await readCsv(res.body, {
    header: (cells) => {
      const columns = uniqueColumnNames(cells);
      builder = new EventBuilder(columns, {
        fieldStyle: config.fieldStyle,
        overrides: { timestamp: config.timestamp.column, ...config.columns },
        parseTimestamp,
      });
      if (builder.plan.timestamp < 0)
        throw new SyncError(
          ErrorCodes.BAD_RESPONSE,
          'fatal',
          `audit-log export has no timestamp column (${config.timestamp.column ?? COLUMN_CANDIDATES.timestamp.join(', ')}): set audit.timestamp.column`,
        );
    },
    row: (values) => {
      if (!builder) return;
      const ts = builder.timestampOf(values);
      if (typeof ts !== 'number') {
        badRows++;
        return;
      }
      if (ts < w.startMs || ts >= w.endMs) return;
      const key = builder.keyOf(values, pass);
      if (key === undefined) return;
      acc.add(key, ts);
      keys?.set(key, ts);
    },
    bad: () => {
      badRows++;
    },
  });
  const start = Math.floor(w.startMs / gridMs) * gridMs;
  const digest = acc.take()[0] ?? { startMs: start, endMs: start + gridMs, count: 0, hash: ZERO_HASH };
  return { digest, keys, badRows };
}

/** The window re-exported, retried on transient failures as the export retries a window. */
export async function exportWindowKeys(
  platform: PlatformClient,
  config: AuditConfig,
  w: ExportWindow,
  opts: { gridMs: number; collect: boolean; signal?: AbortSignal | undefined },
): Promise<WindowKeys> {
  const { retry } = config;
  const policy = windowRetryPolicy(retry);
  for (let attempt = 1; ; attempt++) {
    try {
      return await readWindow(platform, config, w, opts.gridMs, opts.collect, opts.signal);
    } catch (e) {
      if (opts.signal?.aborted) throw opts.signal.reason ?? e;
      if (isFatalExportError(e) || attempt >= policy.maxAttempts) throw e;
      const retryAfterSeconds = isSyncError(e) ? e.retryAfterSeconds : undefined;
      await sleep(backoffDelay(policy, attempt, retryAfterSeconds === undefined ? undefined : retryAfterSeconds * 1000), opts.signal);
    }
  }
}
