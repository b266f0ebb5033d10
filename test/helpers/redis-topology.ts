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

/** A deployment whose master can be killed: `killMasterOf(key)` SIGKILLs the master serving `key`. */
export interface FailoverTopology extends RedisTopology {
  /** SIGKILLs the master serving `key` (Sentinel: the master); resolves with its port once it is dead. */
  killMasterOf(key: string): Promise<number>;
  /** Resolves once `key`'s slot (Sentinel: the set) has a reachable master other than `deadPort`. */
  promoted(key: string, deadPort: number, timeoutMs?: number): Promise<void>;
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

/**
 * Three masters, all 16384 slots assigned; with `replicas: 1` each master has a replica
 * (six nodes) and `nodeTimeoutMs` sets cluster-node-timeout, after which a dead master's
 * replica is promoted.
 */
export async function startRedisCluster(opts: { replicas?: 0 | 1; nodeTimeoutMs?: number } = {}): Promise<FailoverTopology> {
  const dir = mkdtempSync(join(tmpdir(), 'redis-cluster-'));
  const replicas = opts.replicas ?? 0;
  const ports: number[] = [];
  for (let i = 0; i < 3 * (1 + replicas); i++) ports.push(await freePort());
  const byPort = new Map<number, ChildProcess>();
  for (const port of ports)
    byPort.set(
      port,
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
          '--cluster-node-timeout',
          String(opts.nodeTimeoutMs ?? 15_000),
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
  const stop = stopAll([...byPort.values()], dir);
  const cli = async (port: number, ...args: string[]): Promise<string> => (await run('redis-cli', ['-p', String(port), ...args])).stdout;
  const alive = (): number[] => ports.filter((p) => byPort.get(p)?.exitCode === null && byPort.get(p)?.signalCode === null);
  /** Port of the master serving `key`'s slot, as a live node sees it (undefined while none). */
  const masterOf = async (key: string): Promise<number | undefined> => {
    const node = alive()[0] as number;
    const slot = Number((await cli(node, 'cluster', 'keyslot', key)).trim());
    for (const line of (await cli(node, 'cluster', 'nodes')).split('\n')) {
      const [, addr, flags, , , , , state, ...ranges] = line.split(' ');
      if (!flags?.includes('master') || flags.includes('fail') || state !== 'connected') continue;
      for (const r of ranges) {
        const [from, to] = r.split('-').map(Number);
        if (from !== undefined && slot >= from && slot <= (to ?? from)) return Number(addr?.split(':')[1]?.split('@')[0]);
      }
    }
    return undefined;
  };
  try {
    for (const port of ports) await waitUntil(() => ping(port), `redis-server :${port}`);
    await run('redis-cli', [
      '--cluster',
      'create',
      ...ports.map((p) => `127.0.0.1:${p}`),
      '--cluster-replicas',
      String(replicas),
      '--cluster-yes',
    ]);
    await waitUntil(
      async () => {
        for (const port of ports) if (!(await cli(port, 'cluster', 'info')).includes('cluster_state:ok')) return false;
        if (replicas === 0) return true;
        // Every replica in sync with its master: a promotion then loses nothing written before.
        const infos = await Promise.all(ports.map((p) => cli(p, 'info', 'replication')));
        const synced = infos.filter(
          (i) => i.includes('role:slave') && i.includes('master_link_status:up') && !i.includes('master_sync_in_progress:1'),
        );
        return synced.length === 3;
      },
      'the cluster to be ok with its replicas in sync',
      30_000,
    );
  } catch (e) {
    await stop();
    throw e;
  }
  return {
    nodes: ports.map((port) => ({ host: '127.0.0.1', port })),
    stop,
    async killMasterOf(key) {
      const port = await masterOf(key);
      const child = port === undefined ? undefined : byPort.get(port);
      if (port === undefined || !child) throw new Error(`no master serves ${key}`);
      await new Promise<void>((r) => {
        child.once('exit', () => r());
        child.kill('SIGKILL');
      });
      return port;
    },
    async promoted(key, deadPort, timeoutMs = 30_000) {
      await waitUntil(
        async () => {
          const port = await masterOf(key);
          return port !== undefined && port !== deadPort && (await ping(port));
        },
        `a new master for ${key}`,
        timeoutMs,
      );
    },
  };
}

/**
 * A master, its replica and three sentinels (quorum 2) that declare the master down after
 * `downAfterMs` and promote the replica.
 */
export async function startRedisSentinelSet(opts: { downAfterMs?: number } = {}): Promise<FailoverTopology> {
  const dir = mkdtempSync(join(tmpdir(), 'redis-sentinel-set-'));
  const masterPort = await freePort();
  const replicaPort = await freePort();
  const sentinelPorts = [await freePort(), await freePort(), await freePort()];
  const common = ['--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--maxmemory-policy', 'noeviction'];
  const master = startServer(['--port', String(masterPort), ...common], dir);
  const replica = startServer(['--port', String(replicaPort), ...common, '--replicaof', '127.0.0.1', String(masterPort)], dir);
  const children: ChildProcess[] = [master, replica];
  const stop = stopAll(children, dir);
  const cli = async (port: number, ...args: string[]): Promise<string> => (await run('redis-cli', ['-p', String(port), ...args])).stdout;
  const currentMaster = async (): Promise<number> =>
    Number((await cli(sentinelPorts[0] as number, 'sentinel', 'get-master-addr-by-name', 'mymaster')).split('\n')[1]?.trim());
  try {
    await waitUntil(() => ping(masterPort), 'redis master');
    await waitUntil(async () => (await cli(replicaPort, 'info', 'replication')).includes('master_link_status:up'), 'the replica in sync');
    for (const port of sentinelPorts) {
      const conf = join(dir, `sentinel-${port}.conf`);
      writeFileSync(
        conf,
        [
          `port ${port}`,
          'bind 127.0.0.1',
          `dir ${dir}`,
          `sentinel monitor mymaster 127.0.0.1 ${masterPort} 2`,
          `sentinel down-after-milliseconds mymaster ${opts.downAfterMs ?? 1_000}`,
          'sentinel failover-timeout mymaster 10000',
          '',
        ].join('\n'),
      );
      children.push(startServer([conf, '--sentinel'], dir));
    }
    await waitUntil(
      async () => {
        for (const port of sentinelPorts) {
          const info = await cli(port, 'info', 'sentinel');
          if (!info.includes('sentinels=3') || !info.includes('slaves=1')) return false;
        }
        return true;
      },
      'the sentinels to see each other and the replica',
      30_000,
    );
  } catch (e) {
    await stop();
    throw e;
  }
  return {
    nodes: sentinelPorts.map((port) => ({ host: '127.0.0.1', port })),
    masterName: 'mymaster',
    stop,
    async killMasterOf() {
      const port = await currentMaster();
      const child = port === masterPort ? master : port === replicaPort ? replica : undefined;
      if (!child) throw new Error(`the sentinels name an unknown master :${port}`);
      await new Promise<void>((r) => {
        child.once('exit', () => r());
        child.kill('SIGKILL');
      });
      return port;
    },
    async promoted(_key, deadPort, timeoutMs = 30_000) {
      await waitUntil(
        async () => {
          const port = await currentMaster();
          return port !== deadPort && (await ping(port));
        },
        'the sentinels to promote the replica',
        timeoutMs,
      );
    },
  };
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
