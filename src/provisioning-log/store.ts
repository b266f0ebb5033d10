/**
 * Where provisioning-log records live: a capped Redis stream per tenant for the daemon
 * (redis-store.ts), JSON lines in the state directory for the one-shot commands
 * (file-store.ts). Both keep records in id order and apply the same retention.
 */
import type { LogQuery } from './query.ts';
import type { NewRecord, ProvisioningRecord } from './record.ts';

export interface ProvisioningLogStore {
  readonly describe: string;
  /** Appends in order; resolves once durable. Applies the size bound as it goes. */
  append(records: readonly NewRecord[]): Promise<void>;
  /** Newest first, filtered. */
  query(q: LogQuery): Promise<ProvisioningRecord[]>;
  /** Oldest first: up to `limit` records with an id after `afterId` (sink delivery). */
  after(afterId: string | null, limit: number): Promise<ProvisioningRecord[]>;
  /** Drops records older than the age bound and beyond the size bound. */
  trim(): Promise<void>;
  /** Id of the last record delivered to the sinks (null: none yet). */
  deliveredUpTo(): Promise<string | null>;
  setDeliveredUpTo(id: string): Promise<void>;
  close(): Promise<void>;
}

export interface Retention {
  maxEntries: number;
  maxAgeMs: number;
}
