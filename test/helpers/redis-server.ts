/**
 * A private redis-server for tests that stop and restart Redis: temp directory, free port,
 * AOF on (so a restart keeps the queues, like a production Redis with persistence), no RDB
 * snapshots. The shared Redis at 127.0.0.1:6379 is never touched. `stop()` + `start()`
 * restart it on the same port and data directory; `destroy()` removes everything.
 *
 * Needs: redis-server on PATH (or REDIS_SERVER_BIN).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { canConnect, freePort } from './slapd.ts';

export const REDIS_SERVER_BIN = process.env['REDIS_SERVER_BIN'] ?? 'redis-server';

export interface RedisServerHandle {
  port: number;
  url: string;
  dir: string;
  /** Starts (or restarts) the server on the same port and data directory. */
  start(): Promise<void>;
  /** SIGTERM (AOF is flushed) and wait for the exit. */
  stop(): Promise<void>;
  readonly running: boolean;
  /** Stop and remove the data directory. */
  destroy(): Promise<void>;
}

/** `persistence: false`: no AOF either, so a restart comes back empty (a Redis without persistence). */
export async function startRedisServer(opts: { persistence?: boolean } = {}): Promise<RedisServerHandle> {
  const dir = mkdtempSync(join(tmpdir(), 'redis-test-'));
  const port = await freePort();
  let child: ChildProcess | undefined;
  let stderr = '';

  const start = async (): Promise<void> => {
    if (child) return;
    const args = [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      ...(opts.persistence === false ? ['--appendonly', 'no'] : ['--appendonly', 'yes', '--appendfsync', 'always']),
      '--dir',
      dir,
      '--maxmemory-policy',
      'noeviction',
      '--loglevel',
      'warning',
    ];
    const c = spawn(REDIS_SERVER_BIN, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    child = c;
    const keep = (d: Buffer): void => void (stderr = (stderr + d.toString()).slice(-4000));
    c.stdout?.on('data', keep);
    c.stderr?.on('data', keep);
    c.once('exit', () => {
      if (child === c) child = undefined;
    });
    const deadline = Date.now() + 10_000;
    while (!(await canConnect(port))) {
      if (child !== c) throw new Error(`redis-server exited during start-up: ${stderr.trim()}`);
      if (Date.now() > deadline) throw new Error(`redis-server did not listen on ${port} within 10 s: ${stderr.trim()}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  };

  const stop = async (): Promise<void> => {
    const c = child;
    if (!c) return;
    const gone = new Promise<void>((r) => c.once('exit', () => r()));
    c.kill('SIGTERM');
    const force = setTimeout(() => c.kill('SIGKILL'), 5_000);
    await gone;
    clearTimeout(force);
  };

  await start();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    dir,
    start,
    stop,
    get running() {
      return child !== undefined;
    },
    async destroy() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
