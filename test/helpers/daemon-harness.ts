/**
 * Harness for daemon tests: a temp workspace (config YAML + directory files) whose Redis
 * keys live under a unique prefix, real daemon processes spawned from the CLI
 * (`daemon --config F`), the operator commands run the same way, and readers for what a
 * daemon exposes (HTTP endpoints, JSON log lines on stderr, its keys in Redis).
 * `cleanup()` stops every process it started and deletes every key under the prefix.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { stringify } from 'yaml';
import { loadAllTenants } from '../../src/config/load.ts';
import { openControl } from '../../src/jobs/control.ts';
import { triggerRun } from '../../src/jobs/schedulers.ts';
import { BIN, merge, type ConfigPatch, type Directory } from './reconcile-harness.ts';

export const SHARED_REDIS_URL = 'redis://127.0.0.1:6379';
/** A cron pattern that never fires during a test: runs come from `trigger`. */
export const NEVER = '0 0 1 1 *';

export type LogLine = Record<string, unknown> & { level: number; time: number; msg: string };

export interface DaemonProcess {
  child: ChildProcess;
  pid: number;
  /** The observability server, from the "daemon started" log line. */
  url: string;
  /** The status page's server (daemon.ui), '' when disabled. */
  uiUrl: string;
  /** Every JSON log line so far (stderr). */
  logs: LogLine[];
  /** Raw stderr + stdout text (secrets are searched here, not only in parsed lines). */
  output(): string;
  waitForLog(pred: (l: LogLine) => boolean, timeoutMs?: number): Promise<LogLine>;
  /** Resolves once the process has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Send a signal and wait for the exit; `ms` is the time from the signal to the exit. */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null; ms: number }>;
}

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

export interface HttpReply {
  status: number;
  body: string;
}

/** GET without keep-alive (a pooled socket would hold the daemon's server open at shutdown). */
export function httpGet(url: string, timeoutMs = 10_000): Promise<HttpReply> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'GET', agent: false, headers: { connection: 'close' }, timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${url} timed out`)));
    req.on('error', reject);
    req.end();
  });
}

export async function getJson<T = Record<string, unknown>>(url: string): Promise<{ status: number; body: T }> {
  const r = await httpGet(url);
  return { status: r.status, body: JSON.parse(r.body) as T };
}

/** Polls `fn` until it returns a truthy value; throws with `what` after the timeout. */
export async function waitFor<T>(fn: () => Promise<T> | T, what: string, timeoutMs = 15_000, intervalMs = 50): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v as NonNullable<T>;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (last error: ${(last as Error).message})` : ''}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** Value of one Prometheus sample, e.g. metricValue(text, 'scimsync_jobs_total', { queue: 'reconcile', result: 'completed' }). */
export function metricValue(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  let sum: number | undefined;
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][\w:]*)(\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries([...(m[3] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) sum = (sum ?? 0) + Number(m[4]);
  }
  return sum;
}

export interface DaemonWorkspace {
  dir: string;
  configPath: string;
  /** Unique per workspace: Redis keys (`<prefix>:…`) and BullMQ queues (`{<prefix>}:…`). */
  keyPrefix: string;
  redisUrl: string;
  /** Environment of every process started here (the config's ${…} come from it). */
  env: Record<string, string>;
  writeDirectory(d: Directory, file?: string): void;
  /** A single-tenant config (tenant `acme`): `patch` merged over tenantConfig() + daemonSharedConfig(). */
  writeConfig(patch?: ConfigPatch): void;
  /** Any config object as is (multi-tenant files). */
  writeConfigObject(cfg: ConfigPatch): void;
  /** Starts `daemon --config`; resolves once it logged "daemon started" (or at once with `waitStarted: false`). */
  spawnDaemon(opts?: { logLevel?: string; env?: Record<string, string>; waitStarted?: boolean }): Promise<DaemonProcess>;
  cli(args: string[], opts?: { timeoutMs?: number }): Promise<CliRun>;
  /**
   * What `trigger reconcile [--tenant T]` does, in this process (no Node start-up: tests that
   * are not about the CLI save a second per trigger). Returns the job ids.
   */
  trigger(tenant?: string): Promise<Array<string | undefined>>;
  /** A Redis client on the workspace's Redis (one per workspace, closed by cleanup). */
  redis(): Redis;
  /** Every key of this workspace. */
  keys(): Promise<string[]>;
  processes: DaemonProcess[];
  cleanup(): Promise<void>;
}

/** The shared part of every daemon config; tenants add platform/provisioning/schedules. */
export function daemonSharedConfig(ws: Pick<DaemonWorkspace, 'redisUrl' | 'keyPrefix'>, daemon: ConfigPatch = {}): ConfigPatch {
  return {
    redis: { url: ws.redisUrl, keyPrefix: ws.keyPrefix, connectTimeoutSeconds: 2 },
    daemon: merge(
      { http: { host: '127.0.0.1', port: 0 }, ui: { port: 0 }, shutdownTimeoutSeconds: 3, rateLimit: { requestsPerSecond: 0 } },
      daemon,
    ),
    logging: { level: 'info' },
  };
}

/** One tenant: platform from ${<envPrefix>_URL}/${<envPrefix>_TOKEN}, a file source, reconcile triggered only (no change stream). */
export function tenantConfig(tenant: string, opts: { envPrefix?: string; directory?: string; pattern?: string } = {}): ConfigPatch {
  const env = opts.envPrefix ?? 'SIM';
  return {
    tenant,
    platform: {
      baseUrl: `\${${env}_URL}`,
      token: `\${${env}_TOKEN}`,
      allowInsecureHttp: true,
      timeoutSeconds: 10,
      retry: { maxAttempts: 4, baseDelayMs: 20, maxDelayMs: 200 },
    },
    // The change stream is on by default in the daemon; tests that are not about it run the
    // full reconcile alone, so their runs and writes are the ones they trigger.
    provisioning: { source: { type: 'file', path: opts.directory ?? 'directory.yaml' }, changes: { enabled: false } },
    schedules: { reconcile: { pattern: opts.pattern ?? NEVER }, audit: { enabled: false } },
  };
}

export function createDaemonWorkspace(opts: { redisUrl?: string; env?: Record<string, string> } = {}): DaemonWorkspace {
  const dir = mkdtempSync(join(tmpdir(), 'daemon-test-'));
  const keyPrefix = `dt-${randomUUID().slice(0, 12)}`;
  const redisUrl = opts.redisUrl ?? SHARED_REDIS_URL;
  const configPath = join(dir, 'config.yaml');
  const env = { ...opts.env };
  const processes: DaemonProcess[] = [];
  let client: Redis | undefined;
  const baseEnv = (): Record<string, string> => ({ PATH: process.env['PATH'] ?? '', NO_COLOR: '1', ...env });

  const ws: DaemonWorkspace = {
    dir,
    configPath,
    keyPrefix,
    redisUrl,
    env,
    processes,
    writeDirectory: (d, file = 'directory.yaml') => writeFileSync(join(dir, file), stringify(d)),
    writeConfig: (patch = {}) => writeFileSync(configPath, stringify(merge({ ...tenantConfig('acme'), ...daemonSharedConfig(ws) }, patch))),
    writeConfigObject: (cfg) => writeFileSync(configPath, stringify(cfg)),
    async spawnDaemon(o = {}) {
      const p = startDaemonProcess(
        ['daemon', '--config', configPath, '--log-level', o.logLevel ?? 'info'],
        { ...baseEnv(), ...o.env },
        dir,
      );
      processes.push(p.handle);
      if (o.waitStarted === false) p.started.catch(() => undefined);
      else await p.started;
      return p.handle;
    },
    cli: (args, o = {}) =>
      new Promise((resolve) => {
        execFile(
          process.execPath,
          [BIN, ...args],
          { env: baseEnv(), cwd: dir, timeout: o.timeoutMs ?? 20_000 },
          (error, stdout, stderr) => {
            resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr });
          },
        );
      }),
    async trigger(tenant) {
      const all = await loadAllTenants(configPath, baseEnv());
      const control = openControl(all);
      try {
        const ids = [];
        for (const l of all) {
          if (tenant !== undefined && l.config.tenant !== tenant) continue;
          ids.push(await triggerRun(control.queues.reconcile, 'reconcile', l.config.tenant, l.config.daemon.jobAttempts));
        }
        return ids;
      } finally {
        await control.close();
      }
    },
    redis() {
      if (!client) {
        client = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
        client.on('error', () => undefined);
      }
      return client;
    },
    async keys() {
      const c = ws.redis();
      const out: string[] = [];
      let cursor = '0';
      do {
        const [next, batch] = await c.scan(cursor, 'MATCH', `*${keyPrefix}*`, 'COUNT', 1000);
        cursor = next;
        out.push(...batch);
      } while (cursor !== '0');
      return out;
    },
    async cleanup() {
      await Promise.all(
        processes.map(async (p) => {
          if (p.child.exitCode === null && p.child.signalCode === null) {
            p.child.kill('SIGKILL');
            await p.exited;
          }
        }),
      );
      try {
        const keys = await ws.keys();
        const c = ws.redis();
        for (let i = 0; i < keys.length; i += 500) await c.del(...keys.slice(i, i + 500));
      } catch {
        // The test's own Redis may be gone already; its directory is removed with it.
      }
      client?.disconnect();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return ws;
}

function startDaemonProcess(args: string[], env: Record<string, string>, cwd: string): { handle: DaemonProcess; started: Promise<void> } {
  const child = spawn(process.execPath, [BIN, ...args], { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  const logs: LogLine[] = [];
  let raw = '';
  let partial = '';
  const waiters = new Set<{ pred: (l: LogLine) => boolean; resolve: (l: LogLine) => void }>();
  child.stdout?.on('data', (d: Buffer) => void (raw += d.toString('utf8')));
  child.stderr?.on('data', (d: Buffer) => {
    const text = d.toString('utf8');
    raw += text;
    const lines = (partial + text).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.startsWith('{')) continue;
      let rec: LogLine;
      try {
        rec = JSON.parse(line) as LogLine;
      } catch {
        continue;
      }
      logs.push(rec);
      for (const w of [...waiters]) {
        if (w.pred(rec)) {
          waiters.delete(w);
          w.resolve(rec);
        }
      }
    }
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const handle: DaemonProcess = {
    child,
    pid: child.pid ?? -1,
    url: '',
    uiUrl: '',
    logs,
    output: () => raw,
    waitForLog(pred, timeoutMs = 15_000) {
      const found = logs.find(pred);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const w = { pred, resolve: (l: LogLine) => (clearTimeout(timer), resolve(l)) };
        const timer = setTimeout(() => {
          waiters.delete(w);
          reject(new Error(`daemon ${child.pid}: no matching log line within ${timeoutMs} ms; output tail:\n${raw.slice(-3000)}`));
        }, timeoutMs);
        waiters.add(w);
        void exited.then(() => {
          if (!waiters.has(w)) return;
          waiters.delete(w);
          clearTimeout(timer);
          reject(new Error(`daemon ${child.pid} exited before the expected log line; output tail:\n${raw.slice(-3000)}`));
        });
      });
    },
    exited,
    async stop(signal = 'SIGTERM') {
      const t0 = performance.now();
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      const r = await exited;
      return { ...r, ms: performance.now() - t0 };
    },
  };
  const started = handle
    .waitForLog((l) => l.msg === 'daemon started', 20_000)
    .then((l) => {
      handle.url = String(l['url']);
      handle.uiUrl = typeof l['uiUrl'] === 'string' ? l['uiUrl'] : '';
    });
  return { handle, started };
}

/** The platform token must appear nowhere in `text`. Returns the text for chaining in messages. */
export function assertNoSecret(text: string, secret: string, where: string): void {
  if (secret.length < 8) throw new Error('use a long, unique test secret');
  if (text.includes(secret)) throw new Error(`the platform token appears in ${where}`);
}

/** Every string value stored under the workspace's keys (strings, hashes, lists, sets, zsets, streams). */
export async function dumpKeyspace(ws: DaemonWorkspace): Promise<Map<string, string>> {
  const c = ws.redis();
  const out = new Map<string, string>();
  for (const key of await ws.keys()) {
    const type = await c.type(key);
    let value: unknown;
    if (type === 'string') value = await c.get(key);
    else if (type === 'hash') value = await c.hgetall(key);
    else if (type === 'list') value = await c.lrange(key, 0, -1);
    else if (type === 'set') value = await c.smembers(key);
    else if (type === 'zset') value = await c.zrange(key, '0', '-1', 'WITHSCORES');
    else if (type === 'stream') value = await c.xrange(key, '-', '+');
    else continue;
    out.set(key, JSON.stringify(value));
  }
  return out;
}

/** BullMQ job hashes of a queue (`{prefix}:<queue>:<jobId>`, ids may contain ':'), scheduler templates included. */
export async function jobHashes(
  ws: DaemonWorkspace,
  queue: string,
): Promise<
  Array<{
    key: string;
    id: string;
    name: string;
    data: Record<string, unknown>;
    opts: Record<string, unknown>;
    hash: Record<string, string>;
  }>
> {
  const c = ws.redis();
  const base = `{${ws.keyPrefix}}:${queue}:`;
  const out = [];
  for (const key of await ws.keys()) {
    if (!key.startsWith(base)) continue;
    const id = key.slice(base.length);
    // A job (or scheduler template) is a hash with name and data; its :lock, :logs… are not.
    if ((await c.type(key)) !== 'hash') continue;
    const hash = await c.hgetall(key);
    if (hash['data'] === undefined || hash['name'] === undefined) continue;
    out.push({
      key,
      id,
      name: hash['name'],
      data: JSON.parse(hash['data']) as Record<string, unknown>,
      opts: JSON.parse(hash['opts'] ?? '{}') as Record<string, unknown>,
      hash,
    });
  }
  return out;
}
