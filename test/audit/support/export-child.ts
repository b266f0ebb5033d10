/**
 * Child process for the crash test: runs the real engine once, with the real file sink, the
 * local state file and dead-letter store, against the simulator at `url`. Prints one JSON
 * line per progress event so the parent can kill it at a chosen point, and a final summary.
 * Usage: node export-child.ts '<json args>'
 */
import { PlatformClient } from '../../../src/platform/http-client.ts';
import { auditSchema } from '../../../src/audit/config-schema.ts';
import { createSink } from '../../../src/audit/sinks/registry.ts';
import { FileAuditStateStore, auditStateDir } from '../../../src/audit/state/file-store.ts';
import { FileDeadLetterStore } from '../../../src/audit/dead-letter/file-store.ts';
import { runAuditExport } from '../../../src/audit/run-audit-export.ts';
import { JsonlSink } from './jsonl-sink.ts';

interface ChildArgs {
  url: string;
  token: string;
  stateDir: string;
  sinkPath: string;
  plainPath: string;
  tenant: string;
  nowMs: number;
  audit: Record<string, unknown>;
  /** The state store's compaction threshold (default: the store's own). */
  compactBytes?: number;
}

const args = JSON.parse(process.argv[2] ?? '{}') as ChildArgs;
const config = auditSchema.parse({ ...args.audit, sinks: [{ type: 'file', name: 'file', path: args.sinkPath }] });
const platform = new PlatformClient({
  baseUrl: args.url,
  token: args.token,
  allowInsecureHttp: true,
  retry: { maxAttempts: 3, baseDelayMs: 10, maxDelayMs: 50 },
});
const sinks = [...config.sinks.map((c) => createSink(c, { configDir: process.cwd() })), new JsonlSink('plain', args.plainPath)];
const out = (o: unknown): void => void process.stdout.write(`${JSON.stringify(o)}\n`);

const summary = await runAuditExport(
  {
    platform,
    config,
    tenant: args.tenant,
    state: new FileAuditStateStore(args.stateDir, args.tenant, args.compactBytes ? { compactBytes: args.compactBytes } : {}),
    deadLetters: new FileDeadLetterStore(auditStateDir(args.stateDir, args.tenant)),
    sinks,
    now: () => args.nowMs,
    onProgress: (p) => out({ progress: p.phase, window: p.windowIndex, events: p.eventsRead }),
  },
  {},
);
out({ done: true, cursorMs: summary.cursorMs, delivered: summary.delivered });
await platform.close();
