/**
 * Test harness for the audit engine: a real simulator on a socket, a real PlatformClient, the
 * real file sink in a temp directory, and the file (or Redis) state + dead-letter stores.
 */
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { PlatformClient } from '../../../src/platform/http-client.ts';
import { startSimulator, type Simulator, type SimulatorOptions } from '../../../src/simulator/index.ts';
import { auditSchema, type AuditConfig, type AuditConfigInput } from '../../../src/audit/config-schema.ts';
import { createSink } from '../../../src/audit/sinks/registry.ts';
import type { Sink } from '../../../src/audit/sinks/sink.ts';
import { FileAuditStateStore, auditStateDir } from '../../../src/audit/state/file-store.ts';
import { RedisAuditStateStore } from '../../../src/audit/state/redis-store.ts';
import { FileDeadLetterStore } from '../../../src/audit/dead-letter/file-store.ts';
import { RedisDeadLetterStore } from '../../../src/audit/dead-letter/redis-store.ts';
import type { AuditStateStore } from '../../../src/audit/state/store.ts';
import type { DeadLetterStore } from '../../../src/audit/dead-letter/store.ts';
import { JsonlSink, type JsonlSinkOptions } from './jsonl-sink.ts';
import { runAuditExport, type AuditRunOptions, type AuditRunSummary } from '../../../src/audit/run-audit-export.ts';

export const TOKEN = 'audit-test-token';
export const T0 = Date.parse('2026-11-01T00:00:00Z');
export const HOUR = 3_600_000;

export interface HarnessOptions {
  sim?: SimulatorOptions;
  audit?: Partial<AuditConfigInput>;
  /** Engine clock (epoch ms); default T0 + 6 h. */
  nowMs?: number;
  /** Use Redis for state and dead letters (unique prefix per harness). */
  redis?: boolean;
  /** Options of the non-idempotent second sink named `plain`; false = only the file sink. */
  plain?: JsonlSinkOptions | false;
  token?: string;
  /** Point the client at another server (e.g. a hand-written CSV server) instead of the simulator. */
  platformUrl?: string;
}

export interface Harness {
  sim: Simulator;
  platform: PlatformClient;
  dir: string;
  sinkPath: string;
  config: AuditConfig;
  nowMs: number;
  tenant: string;
  state: AuditStateStore;
  deadLetters: DeadLetterStore;
  redis: Redis | undefined;
  keyPrefix: string;
  /** Builds fresh sinks (a closed sink cannot be reopened) and runs the engine once. */
  run(opts?: AuditRunOptions, extra?: { signal?: AbortSignal; sinks?: Sink[]; platform?: PlatformClient }): Promise<AuditRunSummary>;
  /** A client for the simulator with another token. */
  client(token: string): PlatformClient;
  /** `_key` of every line of the file sink, in file order. */
  sinkKeys(): Promise<string[]>;
  sinkLines(): Promise<Array<Record<string, unknown>>>;
  /** Keys the non-idempotent `plain` sink received, in order. */
  plainKeys(): Promise<string[]>;
  plainPath: string;
  /** The sinks of the latest run. */
  lastSinks: Sink[];
  close(): Promise<void>;
}

let seq = 0;

export async function createHarness(opts: HarnessOptions = {}): Promise<Harness> {
  const dir = await mkdtemp(join(tmpdir(), 'audit-engine-'));
  const sim = await startSimulator({
    tokens: [{ token: opts.token ?? TOKEN, permissions: ['AuditLogManage'] }],
    ...opts.sim,
    audit: { startAt: new Date(T0).toISOString(), eventsPerHour: 600, idColumn: true, ...opts.sim?.audit },
  });
  const platform = new PlatformClient({
    baseUrl: opts.platformUrl ?? sim.url,
    token: TOKEN,
    allowInsecureHttp: true,
    retry: { maxAttempts: 2, baseDelayMs: 5, maxDelayMs: 20 },
    bodyTimeoutMs: 5_000,
  });
  const sinkPath = join(dir, 'out', 'audit.ndjson');
  const config = auditSchema.parse({
    windowMinutes: 60,
    overlapMinutes: 15,
    settleSeconds: 0,
    batchSize: 100,
    checkpointEvents: 1000,
    backfill: { from: new Date(T0).toISOString() },
    retry: { windowAttempts: 4, baseDelayMs: 5, maxDelayMs: 20 },
    sinks: [{ type: 'file', name: 'file', path: sinkPath, fsync: false }],
    ...opts.audit,
  });
  const tenant = `t${process.pid}x${seq++}`;
  const keyPrefix = `test-audit-${process.pid}-${Date.now()}-${seq}`;
  let redis: Redis | undefined;
  let state: AuditStateStore;
  let deadLetters: DeadLetterStore;
  if (opts.redis) {
    redis = new Redis('redis://127.0.0.1:6379', { lazyConnect: false, maxRetriesPerRequest: 2 });
    state = new RedisAuditStateStore(redis, keyPrefix, tenant);
    deadLetters = new RedisDeadLetterStore(redis, keyPrefix, tenant);
  } else {
    state = new FileAuditStateStore(join(dir, 'state'), tenant);
    deadLetters = new FileDeadLetterStore(auditStateDir(join(dir, 'state'), tenant));
  }
  const nowMs = opts.nowMs ?? T0 + 6 * HOUR;
  const plainPath = join(dir, 'out', 'plain.jsonl');
  const clients: PlatformClient[] = [];
  const h: Harness = {
    sim,
    platform,
    dir,
    sinkPath,
    config,
    nowMs,
    tenant,
    state,
    deadLetters,
    redis,
    keyPrefix,
    plainPath,
    lastSinks: [],
    async run(runOpts = {}, extra = {}) {
      const sinks = extra.sinks ?? [
        ...config.sinks.map((c) => createSink(c, { configDir: dir })),
        ...(opts.plain === false ? [] : [new JsonlSink('plain', plainPath, opts.plain ?? {})]),
      ];
      h.lastSinks = sinks;
      return runAuditExport(
        {
          platform: extra.platform ?? platform,
          config,
          tenant,
          state,
          deadLetters,
          sinks,
          now: () => h.nowMs,
          ...(extra.signal ? { signal: extra.signal } : {}),
        },
        runOpts,
      );
    },
    async sinkLines() {
      let text = '';
      try {
        text = await readFile(sinkPath, 'utf8');
      } catch {
        return [];
      }
      return text
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as Record<string, unknown>);
    },
    client(token) {
      const c = new PlatformClient({
        baseUrl: sim.url,
        token,
        allowInsecureHttp: true,
        retry: { maxAttempts: 2, baseDelayMs: 5, maxDelayMs: 20 },
      });
      clients.push(c);
      return c;
    },
    async plainKeys() {
      return new JsonlSink('plain', plainPath).keys();
    },
    async sinkKeys() {
      return (await h.sinkLines()).map((l) => l['_key'] as string);
    },
    async close() {
      await platform.close();
      for (const c of clients) await c.close();
      await sim.close();
      if (redis) {
        const keys = await redis.keys(`${keyPrefix}:*`);
        if (keys.length > 0) await redis.del(...keys);
        redis.disconnect();
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
  return h;
}

/** Ids of the events the simulator holds in [fromMs, toMs). */
export function expectedIds(sim: Simulator, fromMs: number, toMs: number): string[] {
  const out: string[] = [];
  for (const e of sim.audit.eventsIn(new Date(fromMs).toISOString(), new Date(toMs).toISOString())) out.push(e.id);
  return out;
}

export function duplicates(keys: readonly string[]): string[] {
  const seen = new Set<string>();
  const dup: string[] = [];
  for (const k of keys) {
    if (seen.has(k)) dup.push(k);
    seen.add(k);
  }
  return dup;
}

export async function listFiles(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch {
    return [];
  }
}
