/**
 * Provisioning-log records delivered through the audit sinks as events of their own kind
 * (`provisioning`), with the audit pipeline's guarantees: the position moves only after every
 * sink acknowledged a batch (or dead-lettered its rejections, replayable with `audit replay`);
 * a sink that still fails after its retries stops delivery and the next run starts again at
 * the same record. Event keys are stable (`provisioning:<tenant>:<record id>`), so an
 * idempotent sink (Elasticsearch `_id`, file sink's resume) holds one copy after a crash.
 */
import type { AuditConfig } from '../audit/config-schema.ts';
import type { DeadLetterStore } from '../audit/dead-letter/store.ts';
import { eventFromDoc, type AuditEvent } from '../audit/event.ts';
import { fanOut, type SinkLane } from '../audit/fan-out.ts';
import type { Sink } from '../audit/sinks/sink.ts';
import { ocsfRecordDoc } from './ocsf-record.ts';
import type { ProvisioningRecord } from './record.ts';
import type { ProvisioningLogStore } from './store.ts';

export const EVENT_KIND = 'provisioning';

const OUTCOME = { ok: 'success', failed: 'failure', held: 'unknown' } as const;

/** The sink document of one record, in the audit section's field style. */
export function recordEvent(r: ProvisioningRecord, fieldStyle: AuditConfig['fieldStyle']): AuditEvent {
  const key = `provisioning:${r.tenant}:${r.id}`;
  const timestampMs = Date.parse(r.time);
  const { id: _id, ...rest } = r;
  if (fieldStyle === 'ocsf') return eventFromDoc(key, timestampMs, ocsfRecordDoc(r, key, timestampMs));
  const doc =
    fieldStyle === 'ecs'
      ? {
          '@timestamp': r.time,
          event: { id: key, kind: EVENT_KIND, dataset: 'scim-audit-sync.provisioning', action: r.action, outcome: OUTCOME[r.result] },
          ...(r.object.type === 'user' && r.object.name !== undefined ? { user: { name: r.object.name } } : {}),
          provisioning: rest,
        }
      : { timestamp: r.time, id: key, kind: EVENT_KIND, action: r.action, result: r.result, provisioning: rest };
  return { key, timestampMs, json: JSON.stringify(doc) };
}

export interface DeliveryDeps {
  store: ProvisioningLogStore;
  sinks: readonly Sink[];
  deadLetters: DeadLetterStore;
  fieldStyle: AuditConfig['fieldStyle'];
  batchSize: number;
  signal?: AbortSignal;
  now?: () => number;
  /** Open the sinks before and close them after (default true). */
  manageSinks?: boolean;
}

export interface DeliveryResult {
  delivered: number;
  deadLettered: number;
  /** The position after this call. */
  upTo: string | null;
}

/** Delivers every record after the stored position; throws (position kept) when a sink fails. */
export async function deliverRecords(deps: DeliveryDeps): Promise<DeliveryResult> {
  const now = deps.now ?? Date.now;
  let upTo = await deps.store.deliveredUpTo();
  let first = await deps.store.after(upTo, deps.batchSize);
  const out: DeliveryResult = { delivered: 0, deadLettered: 0, upTo };
  if (first.length === 0) return out;
  const manage = deps.manageSinks !== false;
  if (manage) for (const s of deps.sinks) await s.open();
  try {
    // Keys a sink already holds from a batch acknowledged just before a crash are not written again.
    const sinceMs = Date.parse(first[0]!.time);
    const lanes: SinkLane[] = [];
    for (const sink of deps.sinks) lanes.push({ sink, held: sink.recentKeys ? await sink.recentKeys(sinceMs) : undefined });
    while (first.length > 0) {
      const events = first.map((r) => recordEvent(r, deps.fieldStyle));
      const res = await fanOut(events, lanes, deps.deadLetters, deps.signal, now());
      out.delivered += events.length;
      for (const r of res.values()) out.deadLettered += r.deadLettered;
      upTo = first[first.length - 1]!.id;
      await deps.store.setDeliveredUpTo(upTo);
      out.upTo = upTo;
      first = await deps.store.after(upTo, deps.batchSize);
    }
  } finally {
    if (manage) for (const s of deps.sinks) await s.close().catch(() => undefined);
  }
  return out;
}
