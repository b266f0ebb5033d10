/** The engine's public types: what a caller (CLI, daemon, demo, bench) passes in and gets back. */
import type { Logger } from 'pino';
import type { PlatformClient } from '../platform/http-client.ts';
import type { AuditConfig } from './config-schema.ts';
import type { DeadLetterStore } from './dead-letter/store.ts';
import type { Sink } from './sinks/sink.ts';
import type { AuditStateStore } from './state/store.ts';

export interface AuditProgress {
  phase: 'window-start' | 'checkpoint' | 'window-done';
  windowIndex: number;
  windowCount: number;
  windowStartMs: number;
  windowEndMs: number;
  cursorMs: number | null;
  /** Committed share of this run's range, 0..1. */
  ratio: number;
  eventsRead: number;
}

export interface AuditEngineDeps {
  platform: PlatformClient;
  config: AuditConfig;
  tenant: string;
  state: AuditStateStore;
  deadLetters: DeadLetterStore;
  /** One per `audit.sinks` entry, already built (createSink). */
  sinks: Sink[];
  logger?: Logger;
  /** Wall clock, epoch ms (test seam). */
  now?: () => number;
  signal?: AbortSignal;
  onProgress?: (p: AuditProgress) => void;
  /** Open the sinks before and close them after the run (default true); the daemon may keep them open. */
  manageSinks?: boolean;
  /** Label of the run lease holder; defaults to host:pid. */
  owner?: string;
}

export interface AuditRunOptions {
  /** Start here instead of cursor − overlap (a manual backfill or re-export). */
  from?: Date;
  /** Stop here instead of now − settle (never later than now − settle). */
  to?: Date;
}

export interface AuditRunSummary {
  tenant: string;
  /** The range this run set out to export, epoch ms; equal when there was nothing to do. */
  rangeStartMs: number;
  rangeEndMs: number;
  windowsPlanned: number;
  windowsDone: number;
  /** Data rows read, in or out of their window (retried windows count again). */
  rowsRead: number;
  /** Events inside their window. */
  eventsRead: number;
  /** Events skipped because they were already delivered (overlap, duplicates in the export, retried windows). */
  duplicatesSkipped: number;
  /** Rows that could not become events (also counted in deadLettered._parse). */
  parseErrors: number;
  /** Acknowledged per sink (including events a sink already held). */
  delivered: Record<string, number>;
  /** Not rewritten to a sink because it already held them after a crash. */
  alreadyHeld: Record<string, number>;
  /** Per sink name, `_parse` for unparsable rows. */
  deadLettered: Record<string, number>;
  schemaDrift: Array<{ added: string[]; removed: string[] }>;
  windowRetries: number;
  previousCursorMs: number | null;
  cursorMs: number | null;
  durationMs: number;
}
