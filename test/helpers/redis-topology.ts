/**
 * Private Redis Cluster and Redis Sentinel deployments for tests (temp directories, free
 * ports, processes killed by `stop()`); the shared Redis at 127.0.0.1:6379 is never touched.
 * Needs redis-server and redis-cli on PATH.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis, type RedisOptions } from 'ioredis';
import { freePort } from './slapd.ts';
import { createTestCa } from './test-ca.ts';

const run = promisify(execFile);

export interface RedisTopology {
  /** Seed nodes (cluster) or sentinels (sentinel). */
  nodes: Array<{ host: string; port: number }>;
  /** For a Sentinel deployment: the monitored master's name. */
  masterName?: string;
  /** For the TLS deployment: the CA that signed the server certificate, and the password. */
  caFile?: string;
  password?: string;
  stop(): Promise<void>;
}

async function waitUntil(check: () => Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

function startServer(args: string[], dir: string): ChildProcess {
  const child = spawn('redis-server', args, { cwd: dir, stdio: 'ignore' });
  return child;
}

/** One PING on a fresh connection (`extra`: password, TLS…); false while the server is not up. */
async function ping(port: number, extra: RedisOptions = {}): Promise<boolean> {
  const r = new Redis({ port, host: '127.0.0.1', ...extra, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  r.on('error', () => undefined);
  try {
    await r.connect();
    return (await r.ping()) === 'PONG';
  } finally {
    r.disconnect();
  }
}

function stopAll(children: ChildProcess[], dir: string): () => Promise<void> {
  return async () => {
    await Promise.all(
      children.map(
        (c) =>
          new Promise<void>((resolve) => {
            if (c.exitCode !== null || c.signalCode !== null) return resolve();
            c.once('exit', () => resolve());
            c.kill('SIGKILL');
          }),
      ),
    );
    rmSync(dir, { recursive: true, force: true });
  };
}

/** Three masters, no replicas, all 16384 slots assigned. */
export async function startRedisCluster(): Promise<RedisTopology> {
  const dir = mkdtempSync(join(tmpdir(), 'redis-cluster-'));
  const ports = [await freePort(), await freePort(), await freePort()];
  const children = ports.map((port) =>
    startServer(
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        `nodes-${port}.conf`,
        '--save',
        '',
        '--appendonly',
        'no',
        '--dir',
        dir,
        '--maxmemory-policy',
        'noeviction',
      ],
      dir,
    ),
  );
  const stop = stopAll(children, dir);
  try {
    for (const port of ports) await waitUntil(() => ping(port), `redis-server :${port}`);
    await run('redis-cli', ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '0', '--cluster-yes']);
    await waitUntil(async () => {
      const { stdout } = await run('redis-cli', ['-p', String(ports[0]), 'cluster', 'info']);
      return stdout.includes('cluster_state:ok');
    }, 'cluster_state:ok');
  } catch (e) {
    await stop();
    throw e;
  }
  return { nodes: ports.map((port) => ({ host: '127.0.0.1', port })), stop };
}

/** One master and one sentinel monitoring it as `mymaster`. */
export async function startRedisSentinel(): Promise<RedisTopology> {
  const dir = mkdtempSync(join(tmpdir(), 'redis-sentinel-'));
  const masterPort = await freePort();
  const sentinelPort = await freePort();
  const master = startServer(
    [
      '--port',
      String(masterPort),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      dir,
      '--maxmemory-policy',
      'noeviction',
    ],
    dir,
  );
  const conf = join(dir, 'sentinel.conf');
  writeFileSync(
    conf,
    [`port ${sentinelPort}`, 'bind 127.0.0.1', `dir ${dir}`, `sentinel monitor mymaster 127.0.0.1 ${masterPort} 1`, ''].join('\n'),
  );
  const sentinel = startServer([conf, '--sentinel'], dir);
  const stop = stopAll([master, sentinel], dir);
  try {
    await waitUntil(() => ping(masterPort), 'redis master');
    await waitUntil(async () => {
      const { stdout } = await run('redis-cli', ['-p', String(sentinelPort), 'sentinel', 'get-master-addr-by-name', 'mymaster']);
      return stdout.includes(String(masterPort));
    }, 'sentinel to see the master');
  } catch (e) {
    await stop();
    throw e;
  }
  return { nodes: [{ host: '127.0.0.1', port: sentinelPort }], masterName: 'mymaster', stop };
}

/** One server that only speaks TLS (certificate from a throw-away CA) and requires a password. */
export async function startRedisTls(): Promise<RedisTopology> {
  const dir = mkdtempSync(join(tmpdir(), 'redis-tls-'));
  const ca = createTestCa(dir);
  const port = await freePort();
  const password = `pw-${Math.random().toString(36).slice(2)}`;
  const server = startServer(
    [
      '--port',
      '0',
      '--tls-port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--tls-cert-file',
      ca.certFile,
      '--tls-key-file',
      ca.keyFile,
      '--tls-ca-cert-file',
      ca.caFile,
      '--tls-auth-clients',
      'no',
      '--requirepass',
      password,
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      dir,
    ],
    dir,
  );
  const stop = stopAll([server], dir);
  try {
    await waitUntil(() => ping(port, { password, tls: { ca: ca.caPem, servername: 'localhost' } }), 'redis over TLS');
  } catch (e) {
    await stop();
    throw e;
  }
  return { nodes: [{ host: '127.0.0.1', port }], caFile: ca.caFile, password, stop };
}
