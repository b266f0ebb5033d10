/**
 * The sink contract. A sink acknowledges a batch only when the events are durable at the
 * destination (fsync'd, 2xx with per-item success, indexer-acked…). A batch ends in one of
 * three ways, per event: delivered, rejected (dead-letter, never retried automatically), or
 * the whole call throws a transient SyncError after the sink's own retry budget — then the
 * pipeline stops and does not move the cursor.
 */
import type { AuditEvent } from '../event.ts';

export interface RejectedEvent {
  event: AuditEvent;
  /** Stable reason code, e.g. `E_REJECTED`, `hec_invalid_data_format`, `es_mapper_parsing_exception`. */
  code: string;
  reason: string;
}

export interface WriteResult {
  /** Events durably accepted by the destination (including ones it already had, for idempotent sinks). */
  delivered: number;
  rejected: RejectedEvent[];
}

export interface SinkObserver {
  onRetry?(e: { sink: string; attempt: number; delayMs: number; reason: string }): void;
  onError?(e: { sink: string; code: string; message: string }): void;
}

export interface Sink {
  /** Configured name (unique within a tenant), used in metrics, dead-letter and `audit replay --sink`. */
  readonly name: string;
  readonly type: string;
  /** Whether writing the same event twice leaves one copy (ES `_id` create, file with key-aware resume). */
  readonly idempotent: boolean;
  /** Open connections/files. Called once before the first write. */
  open(): Promise<void>;
  /** Deliver a batch and resolve only once it is acknowledged. Batches arrive in cursor order. */
  write(events: AuditEvent[], signal?: AbortSignal): Promise<WriteResult>;
  /**
   * Keys this sink durably holds with a timestamp ≥ `sinceMs` (used after a crash between the
   * sink's ack and the cursor commit, so nothing is written twice). Sinks that cannot tell omit it.
   */
  recentKeys?(sinceMs: number): Promise<Set<string>>;
  /** Flush and release resources; after close() no write is accepted. */
  close(): Promise<void>;
}
