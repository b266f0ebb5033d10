/** The engine's public types: what a caller (CLI, daemon, demo, bench) passes in and gets back. */
import type { Logger } from 'pino';
import type { PlatformClient } from '../platform/http-client.ts';
import type { AuditConfig } from './config-schema.ts';
import type { DeadLetterStore } from './dead-letter/store.ts';
import type { AuditObserver } from './observer.ts';
import type { Sink } from './sinks/sink.ts';
import type { AuditStateStore } from './state/store.ts';

export interface AuditProgress {
  phase: 'window-start' | 'checkpoint' | 'window-done';
  windowIndex: number;
  windowCount: number;
  /** Windows of this run finished so far. */
  windowsDone: number;
  windowStartMs: number;
  windowEndMs: number;
  cursorMs: number | null;
  /**
   * Share of this run's range done by this run, 0..1: 0 at the start (whatever the stored
   * cursor, e.g. a re-run that re-reads a long overlap), 1 once its last window is done.
   */
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
  /** Receives the engine's events: metrics and log lines (`auditRecorder`); none when absent. */
  observer?: AuditObserver;
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
  /** Acknowledged per sink, including those it already held after a crash (see alreadyHeld). */
  delivered: Record<string, number>;
  /** Part of `delivered` not written again because the sink already held them after a crash. */
  alreadyHeld: Record<string, number>;
  /** Per sink name, `_parse` for unparsable rows. */
  deadLettered: Record<string, number>;
  schemaDrift: Array<{ added: string[]; removed: string[] }>;
  windowRetries: number;
  previousCursorMs: number | null;
  cursorMs: number | null;
  durationMs: number;
}
