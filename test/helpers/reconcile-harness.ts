/**
 * End-to-end harness for the provisioning engine: a temp workspace (config + directory
 * YAML + its own state dir) pointed at a real simulator, the real CLI run as a child
 * process, and the in-process engine built from the same config file.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { loadConfig } from '../../src/config/load.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { applyReconcile, planReconcile } from '../../src/reconcile/engine.ts';
import { buildReconcileContext, type BuiltReconcileContext } from '../../src/reconcile/from-config.ts';
import type { LedgerData, LedgerStore } from '../../src/reconcile/ledger.ts';
import type { Plan } from '../../src/reconcile/plan-types.ts';
import type { ApplyResult } from '../../src/reconcile/apply.ts';
import { startSimulator, type RequestLogEntry, type Simulator, type SimulatorOptions } from '../../src/simulator/index.ts';

export const BIN = join(import.meta.dirname, '../../bin/scim-audit-sync.mjs');
export const EXAMPLES = join(import.meta.dirname, '../../config/examples');
export const SIM_TOKEN = 'e2e-secret-token-5b1f0c';

export interface DirUser {
  externalId: string;
  userName: string;
  givenName?: string;
  familyName?: string;
  displayName?: string;
  emails?: string | string[];
  active?: boolean;
  attributes?: Record<string, unknown>;
}

export interface DirGroup {
  externalId: string;
  displayName: string;
  members?: string[];
}

export interface Directory {
  users: DirUser[];
  groups: DirGroup[];
}

/** A plain config object; merged over the base config below (objects merge, the rest replaces). */
export type ConfigPatch = Record<string, unknown>;

export function startSim(opts: SimulatorOptions = {}): Promise<Simulator> {
  return startSimulator({ tokens: [{ token: SIM_TOKEN }], ...opts });
}

/** `n` distinct realistic users u-<n>; stable across calls so directories can be edited. */
export function person(n: number, extra: Partial<DirUser> = {}): DirUser {
  return {
    externalId: `u-${n}`,
    userName: `user${n}@example.com`,
    givenName: `Given${n}`,
    familyName: `Family${n}`,
    emails: `user${n}@example.com`,
    ...extra,
  };
}

export function people(from: number, to: number): DirUser[] {
  const out: DirUser[] = [];
  for (let n = from; n <= to; n++) out.push(person(n));
  return out;
}

export function exampleDirectory(): Directory {
  return parse(readFileSync(join(EXAMPLES, 'directory.yaml'), 'utf8')) as Directory;
}

export function baseConfig(): ConfigPatch {
  return {
    tenant: 'e2e',
    platform: {
      baseUrl: '${SIM_URL}',
      token: '${SIM_TOKEN}',
      allowInsecureHttp: true,
      timeoutSeconds: 10,
      // Short backoff keeps retry tests fast; Retry-After from the server still wins.
      retry: { maxAttempts: 4, baseDelayMs: 20, maxDelayMs: 200 },
    },
    provisioning: { source: { type: 'file', path: 'directory.yaml' } },
    state: { dir: 'state' },
    logging: { level: 'warn' },
  };
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function merge(base: ConfigPatch, patch: ConfigPatch): ConfigPatch {
  const out: ConfigPatch = { ...base };
  for (const [k, v] of Object.entries(patch)) {
    const prev = out[k];
    out[k] = isPlainObject(prev) && isPlainObject(v) ? merge(prev, v) : v;
  }
  return out;
}

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
  durationMs: number;
}

export interface ApplyOutput {
  plan: Plan;
  result: ApplyResult;
}

export interface Workspace {
  dir: string;
  configPath: string;
  directoryPath: string;
  /** The environment the config's ${SIM_URL}/${SIM_TOKEN} come from (child and in-process alike). */
  env: Record<string, string>;
  writeDirectory(d: Directory): void;
  writeConfig(patch?: ConfigPatch): void;
  /** Raw config text (for invalid-config tests). */
  writeConfigText(text: string): void;
  /** `<state>/<tenant>/ledger.json`; tenant defaults to the harness config's. */
  readLedger(tenant?: string): LedgerData | undefined;
  cli(args: string[], opts?: { env?: Record<string, string>; timeoutMs?: number }): Promise<CliRun>;
  /** `apply --json` (extra args appended); throws with stderr when stdout is not the JSON document. */
  apply(args?: string[], opts?: { env?: Record<string, string> }): Promise<CliRun & { out: ApplyOutput }>;
  plan(args?: string[]): Promise<CliRun & { out: Plan }>;
  /** Spawn `apply` without waiting (crash tests kill it). */
  spawnApply(args?: string[]): ChildProcess;
  /** The in-process engine on the same config; close() it. */
  context(opts?: { ledgerStore?: LedgerStore }): Promise<BuiltReconcileContext>;
  /** plan + apply in this process (no Node start-up): for setting the scene quickly. */
  applyInProcess(opts?: { allowDeletes?: boolean; concurrency?: number }): Promise<ApplyOutput>;
  /** plan only, in this process. */
  planInProcess(): Promise<Plan>;
}

export function createWorkspace(sim: Simulator, opts: { directory: Directory; config?: ConfigPatch; token?: string }): Workspace {
  const dir = mkdtempSync(join(tmpdir(), 'reconcile-e2e-'));
  const configPath = join(dir, 'config.yaml');
  const directoryPath = join(dir, 'directory.yaml');
  const env = { SIM_URL: sim.url, SIM_TOKEN: opts.token ?? SIM_TOKEN };

  const cli = (args: string[], o: { env?: Record<string, string>; timeoutMs?: number } = {}): Promise<CliRun> =>
    new Promise((resolve) => {
      const started = performance.now();
      execFile(
        process.execPath,
        [BIN, ...args],
        // A clean environment: nothing from the developer's shell leaks in.
        {
          env: { PATH: process.env['PATH'] ?? '', NO_COLOR: '1', ...env, ...o.env },
          cwd: dir,
          timeout: o.timeoutMs ?? 30_000,
          maxBuffer: 64 * 1024 * 1024,
        },
        (error, stdout, stderr) => {
          const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
          resolve({ code, stdout, stderr, durationMs: performance.now() - started });
        },
      );
    });

  const parsed = <T>(run: CliRun, what: string): T => {
    try {
      return JSON.parse(run.stdout) as T;
    } catch {
      throw new Error(
        `${what}: stdout is not JSON (exit ${run.code})\nstdout: ${run.stdout.slice(0, 2000)}\nstderr: ${run.stderr.slice(0, 4000)}`,
      );
    }
  };

  const ws: Workspace = {
    dir,
    configPath,
    directoryPath,
    env,
    writeDirectory: (d) => writeFileSync(directoryPath, stringify(d)),
    writeConfig: (patch = {}) => writeFileSync(configPath, stringify(merge(baseConfig(), patch))),
    writeConfigText: (text) => writeFileSync(configPath, text),
    readLedger(tenant = 'e2e') {
      try {
        return JSON.parse(readFileSync(join(dir, 'state', tenant, 'ledger.json'), 'utf8')) as LedgerData;
      } catch {
        return undefined;
      }
    },
    cli,
    async apply(args = [], o = {}) {
      const run = await cli(['apply', '--config', configPath, '--json', ...args], o);
      return { ...run, out: parsed<ApplyOutput>(run, 'apply') };
    },
    async plan(args = []) {
      const run = await cli(['plan', '--config', configPath, '--json', ...args]);
      return { ...run, out: parsed<Plan>(run, 'plan') };
    },
    spawnApply(args = []) {
      return spawn(process.execPath, [BIN, 'apply', '--config', configPath, '--json', ...args], {
        env: { PATH: process.env['PATH'] ?? '', NO_COLOR: '1', ...env },
        cwd: dir,
        stdio: 'ignore',
      });
    },
    async context(o = {}) {
      const loaded = await loadConfig(configPath, env);
      return buildReconcileContext(loaded, createLogger({ level: 'silent' }), o.ledgerStore ? { ledgerStore: o.ledgerStore } : {});
    },
    async applyInProcess(o = {}) {
      const ctx = await ws.context();
      try {
        const planned = await planReconcile(ctx, { allowDeletes: o.allowDeletes === true });
        const result = await applyReconcile(ctx, planned, o.concurrency !== undefined ? { concurrency: o.concurrency } : {});
        return { plan: planned.plan, result };
      } finally {
        await ctx.close();
      }
    },
    async planInProcess() {
      const ctx = await ws.context();
      try {
        return (await planReconcile(ctx, { allowDeletes: false })).plan;
      } finally {
        await ctx.close();
      }
    },
  };
  ws.writeDirectory(opts.directory);
  ws.writeConfig(opts.config ?? {});
  return ws;
}

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Requests that change something (`.search` POSTs are reads). */
export function writeRequests(sim: Simulator): RequestLogEntry[] {
  return sim.requests.filter((r) => WRITE_METHODS.has(r.method) && !r.path.endsWith('/.search'));
}

export function requestsTo(sim: Simulator, method: string, pathPrefix: string): RequestLogEntry[] {
  return sim.requests.filter((r) => r.method === method && r.path.startsWith(pathPrefix));
}

/** Sorted userNames of a platform group's members (by displayName), for exact-membership assertions. */
export function memberNames(sim: Simulator, displayName: string): string[] {
  const g = sim.store.getGroupByDisplayName(displayName);
  if (!g) throw new Error(`no platform group ${displayName}`);
  return (g.members ?? []).map((m) => sim.store.getUser(m.value)?.userName ?? `?${m.value}`).sort();
}

/** The platform users with this userName, compared case-insensitively (to prove "exactly once"). */
export function usersNamed(sim: Simulator, userName: string): number {
  const want = userName.toLowerCase();
  return sim.store.users().filter((u) => u.userName.toLowerCase() === want).length;
}

export const SCIM = '/api/scim/v2';
